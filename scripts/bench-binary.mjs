// Measures dist/venue-box (npm run build:binary first), or the binary given as argument, and prints one JSON line:
//   arch                      the binary's architecture; emulated: true when it is not this machine's and runs
//                             under qemu user emulation (an arm64 binary on x64: `node scripts/bench-binary.mjs
//                             dist/venue-box-linux-arm64` after `bash build.sh --arch arm64`)
//   sizeMb                    size of the binary, MB (10^6 bytes)
//   startToFirst200MsMedian   exec -> first 200 from the token endpoint, median of 10 starts
//   cpuToFirst200MsMedian     CPU time (user + system, all threads) the process used until then, median: less
//                             at the mercy of a busy machine than the wall time (10 ms steps)
//   idleRssMb                 resident memory (VmRSS) 1 s after that 200, idle, median of the 10 starts;
//                             idleRssAnonMb / idleRssFileMb split it: anonymous memory (heaps) and pages
//                             mapped from files (mostly the node binary's own code, shared and reclaimable)
//   settledRssMb              resident memory after SETTLE_S (70) s idle since that 200, median of 3 more starts,
//                             with settledRssAnonMb / settledRssFileMb: the box as it idles between services or
//                             at night, once the start's garbage is collected and the WAL checkpointer's thread,
//                             with nothing to copy back for a minute, has gone (src/db/checkpointer.ts)
//   coldStartMs               the same as the first figure for the very first start (empty addon cache and
//                             data directory: addons written, database migrated, demo provisioned); not in the median
// Under emulation there are 5 starts, the times say how slow qemu is rather than how fast a box is, and the
// memory figures are left out (they would be qemu's, translated code included).
// Figures and what they are held to: docs/operations.md "Flashing a venue box" and "Idle memory".
// Each start runs the binary from a temp directory on 127.0.0.1 with the demo, then stops it with SIGTERM; its
// environment is a bare PATH and HOME and the GLIBC_TUNABLES of native-config/venue-box.service.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { binaryArch, emulatorFor } from './lib/emulation.mjs';

const binary = process.argv[2] ? resolve(process.argv[2]) : new URL('../dist/venue-box', import.meta.url).pathname;
const demo = JSON.parse(readFileSync(new URL('../native-config/demo.json', import.meta.url), 'utf8')).tenants[0];

if (!existsSync(binary)) {
  console.error(`bench-binary: ${binary} is missing: run npm run build:binary (or bash build.sh --arch arm64) first`);
  process.exit(1);
}

const arch = binaryArch(binary);
const emulator = emulatorFor(arch);
if (emulator?.missing) {
  console.error(`bench-binary: ${binary} is for ${arch}: ${emulator.missing}`);
  process.exit(1);
}
const STARTS = emulator ? 5 : 10;
const SETTLED_STARTS = 3;
const SETTLE_S = Number(process.env.SETTLE_S ?? 70);
const DEADLINE_MS = emulator ? 120_000 : 20_000;
const dir = mkdtempSync(join(tmpdir(), 'vb-bench-binary-'));
copyFileSync(binary, join(dir, 'venue-box'));
// The box's malloc as the systemd unit sets it (a fixed mmap threshold: docs/architecture.md), read from the unit.
const GLIBC_TUNABLES = /^Environment=GLIBC_TUNABLES=(.*)$/m.exec(
  readFileSync(new URL('../native-config/venue-box.service', import.meta.url), 'utf8'),
)?.[1];
const env = { PATH: '/usr/bin:/bin', HOME: dir, VENUE_BOX_CACHE: join(dir, 'cache'), GLIBC_TUNABLES, ...emulator?.env };
const tokenRequest = {
  method: 'POST',
  headers: {
    'content-type': 'application/x-www-form-urlencoded',
    'x-tenant': demo.id,
    authorization: `Basic ${Buffer.from(`${demo.clients[0].clientId}:${demo.clients[0].clientSecret}`).toString('base64')}`,
  },
  body: 'grant_type=password&username=anonymous&password=',
};

try {
  const cold = await startOnce();
  const runs = [];
  for (let i = 0; i < STARTS; i++) runs.push(await startOnce());
  const settled = [];
  if (!emulator) for (let i = 0; i < SETTLED_STARTS; i++) settled.push(await startOnce(SETTLE_S));
  console.log(
    JSON.stringify({
      arch,
      ...(emulator && { emulated: true }),
      sizeMb: round(statSync(binary).size / 1e6),
      startToFirst200MsMedian: round(median(runs.map((r) => r.ms))),
      cpuToFirst200MsMedian: round(median(runs.map((r) => r.cpuMs))),
      ...(!emulator && {
        idleRssMb: round(median(runs.map((r) => r.rssMb))),
        idleRssAnonMb: round(median(runs.map((r) => r.anonMb))),
        idleRssFileMb: round(median(runs.map((r) => r.fileMb))),
        settledRssMb: round(median(settled.map((r) => r.rssMb))),
        settledRssAnonMb: round(median(settled.map((r) => r.anonMb))),
        settledRssFileMb: round(median(settled.map((r) => r.fileMb))),
        settleS: SETTLE_S,
      }),
      coldStartMs: round(cold.ms),
      starts: STARTS,
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** One start; its memory `idleS` s after the first 200 (not under emulation). */
async function startOnce(idleS = 1) {
  const port = await freePort();
  const t0 = performance.now();
  const args = ['serve', '--demo', '--host', '127.0.0.1', '--port', String(port), '--data-dir', join(dir, 'data')];
  const proc = emulator
    ? spawn(emulator.command, ['./venue-box', ...args], { cwd: dir, env, stdio: ['ignore', 'ignore', 'inherit'] })
    : spawn('./venue-box', args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  try {
    const deadline = t0 + DEADLINE_MS;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`venue-box exited with ${proc.exitCode} before answering`);
      if (performance.now() > deadline) throw new Error(`venue-box did not answer 200 within ${DEADLINE_MS / 1000} s`);
      const status = await fetch(`http://127.0.0.1:${port}/auth-oauth2/oauth/token`, tokenRequest).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) break;
      if (status !== 0) throw new Error(`the token endpoint answered ${status}`);
      await sleep(2);
    }
    const ms = performance.now() - t0;
    const cpuMs = cpuTimeMs(proc.pid);
    if (emulator) return { ms, cpuMs };
    await sleep(idleS * 1000);
    const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8');
    const mb = (field) => (Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1]) * 1024) / 1e6;
    return { ms, cpuMs, rssMb: mb('VmRSS'), anonMb: mb('RssAnon'), fileMb: mb('RssFile') };
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
}

/** utime + stime of a process from /proc/<pid>/stat (fields 14 and 15, in clock ticks of 10 ms). */
function cpuTimeMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function round(n) {
  return Math.round(n * 10) / 10;
}
