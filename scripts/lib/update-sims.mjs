// The update side of a simulated box (test/support/sim-device.ts's SimDevice) for scripts/bench-update.mjs: it
// long-polls the catalogue until a rollout names a release for it, then downloads as src/modules/update/download.ts
// does (the patch from its own binary when offered, else the whole binary; signed `Range` GETs of 1 MiB, one after
// another, at most `bytesPerSecond` on average) and reports `downloading`, then `healthy` in its hello (it installs
// nothing). Also the central's memory and CPU, read from /proc.
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

const RANGE_BYTES = 1024 * 1024;
/** The long poll's wait: shorter than the central's 60 s, so a poll left over at the end returns soon. */
const WAIT_S = 20;

/** A body's bytes as the central sent them (`content-length`). */
const bodyBytes = (answer) => Number(answer.headers.get('content-length') ?? 0);

/**
 * A signed `Range: bytes=start-end` GET for a SimDevice, with node:http and a kept-alive connection as the box's
 * download.ts asks it; the body is counted, and kept only when `keep` (the client must stay cheaper than the
 * central it measures). Resolves with the status, the body's length and its bytes. Signed (and stamped: docs/sync.md
 * "Signed requests") by the SimDevice's own signedHeaders.
 */
export function rangeGetter() {
  const agent = new Agent({ keepAlive: true });
  return async (sim, path, start, end, keep) => {
    const headers = await sim.signedHeaders('GET', path, '');
    return new Promise((resolve, reject) => {
      const url = new URL(path, sim.baseUrl);
      const req = request(url, { agent, headers: { ...headers, range: `bytes=${start}-${end}` } }, (res) => {
        const chunks = [];
        let length = 0;
        res.on('data', (c) => {
          length += c.length;
          if (keep) chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode, length, bytes: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.setTimeout(30_000, () => req.destroy(new Error('range GET: no answer in 30 s')));
      req.on('error', reject);
      req.end();
    });
  };
}

/**
 * The update report of a box running `version` (src/shared/release.ts UpdateReport); `over` names the state.
 * The hello carries the same version at its top level.
 */
export const helloWith = (sim, version, over = {}) =>
  sim.hello({
    version,
    update: { version, arch: 'x64', node: process.versions.node, state: 'idle', since: Date.now(), ...over },
  });

/**
 * One box through one rollout: long polls from `rev` until the catalogue names a release of `version` from a
 * rollout other than `skipRollout`, then downloads and reports. Resolves with when it saw the target and when its
 * `healthy` hello was answered (performance.now()), and the bytes it downloaded; counts every body in `served`.
 * Gives up (throws) at `deadline` (performance.now()) or after `maxPolls` answers without a target. `get` is a
 * rangeGetter's; `keep` keeps the downloaded bytes (`kept`).
 */
export async function updateOnce(sim, o) {
  const { rev: startRev, own, version, skipRollout, bytesPerSecond, deadline, served, maxPolls = 30 } = o;
  let rev = startRev;
  let target = null;
  for (let polls = 0; !target; polls++) {
    if (polls >= maxPolls || performance.now() > deadline) throw new Error(`no target after ${polls} polls`);
    const a = await sim.catalogue(rev, WAIT_S);
    served.other += bodyBytes(a);
    if (a.status !== 200) throw new Error(`catalogue: ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`);
    rev = a.body.rev ?? rev;
    const t = a.body.release;
    if (t && t.rollout !== skipRollout && JSON.parse(t.release.manifest).version === version) target = t;
  }
  const seenAt = performance.now();
  const manifest = JSON.parse(target.release.manifest);
  const patch = target.patches.find((p) => p.from === own.sha256 && p.size < manifest.size);
  const [path, total] = patch ? [patch.url, patch.size] : [target.url, manifest.size];
  const report = { target: version, rollout: target.rollout };
  const started = await helloWith(sim, own.version, { ...report, state: 'downloading', progress: { bytes: 0, total } });
  served.other += bodyBytes(started);
  if (started.status !== 200) throw new Error(`hello: ${started.status}`);
  const pieces = [];
  const t0 = performance.now();
  for (let have = 0; have < total; ) {
    if (performance.now() > deadline) throw new Error(`download stopped at the deadline, ${have} of ${total} bytes`);
    const end = Math.min(total, have + RANGE_BYTES) - 1;
    const a = await o.get(sim, path, have, end, o.keep);
    served.download += a.length;
    if (a.status !== 206 || a.length !== end - have + 1) throw new Error(`range ${have}-${end}: ${a.status}`);
    if (o.keep) pieces.push(a.bytes);
    have += a.length;
    if (bytesPerSecond > 0) {
      const due = (have / bytesPerSecond) * 1000 - (performance.now() - t0);
      if (due > 0) await sleep(due);
    }
  }
  const done = await helloWith(sim, version, { ...report, state: 'healthy' });
  served.other += bodyBytes(done);
  if (done.status !== 200) throw new Error(`hello: ${done.status}`);
  return { seenAt, reportedAt: performance.now(), patched: Boolean(patch), bytes: total, kept: Buffer.concat(pieces) };
}

const kib = (text, field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
const readOr = (file) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

/**
 * The central's memory while `fn` runs, sampled every `everyMs`: the peak RSS of its own process, and the peak
 * sums of RSS and of PSS over its PostgreSQL's processes (`pids()`; RSS counts the shared buffers once per
 * process that touched them, PSS shares them out), in MB.
 */
export async function withCentralMemory(centralPid, pids, fn, everyMs = 500) {
  const peak = { centralRssMb: 0, postgresRssMb: 0, postgresPssMb: 0 };
  const sample = () => {
    peak.centralRssMb = Math.max(peak.centralRssMb, kib(readOr(`/proc/${centralPid}/status`), 'VmRSS') / 1024);
    let rss = 0;
    let pss = 0;
    for (const pid of pids()) {
      if (pid === centralPid) continue;
      const rollup = readOr(`/proc/${pid}/smaps_rollup`);
      rss += kib(rollup, 'Rss');
      pss += kib(rollup, 'Pss');
    }
    peak.postgresRssMb = Math.max(peak.postgresRssMb, rss / 1024);
    peak.postgresPssMb = Math.max(peak.postgresPssMb, pss / 1024);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  try {
    const result = await fn();
    sample();
    return { ...result, memory: Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, Math.round(v)])) };
  } finally {
    clearInterval(timer);
  }
}

/**
 * A process and all its descendants, from /proc's `children` lists: no process is started (scripts/lib/run.mjs
 * treeOf runs pgrep per process, which costs this client more CPU than its downloads when sampled twice a second).
 */
export function processTree(pid) {
  const pids = [pid];
  for (let i = 0; i < pids.length && pids.length < 10_000; i++) {
    let tasks = [];
    try {
      tasks = readdirSync(`/proc/${pids[i]}/task`);
    } catch {
      continue; // gone
    }
    for (const tid of tasks) {
      for (const child of readOr(`/proc/${pids[i]}/task/${tid}/children`).split(' ').filter(Boolean)) {
        pids.push(Number(child));
      }
    }
  }
  return pids;
}

/** CPU seconds (user + system) used so far by the processes `pids` and their children that exited. */
export function cpuSecondsOf(pids) {
  let ticks = 0;
  for (const pid of pids) {
    const f = readOr(`/proc/${pid}/stat`).split(') ')[1]?.split(' ');
    if (f) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  }
  return ticks / 100;
}
