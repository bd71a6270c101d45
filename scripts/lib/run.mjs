// What the benchmarks that start a box and a central share: temp directories and child processes cleaned up
// however the run ends, the CLI of dist/main.cjs, a process tree for foreign-CPU accounting, and the central.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const root = new URL('../..', import.meta.url).pathname;

/**
 * One benchmark run: `started` processes are stopped and `tmp()` directories removed when the process exits,
 * also after an error (a failed run must not leave a box or a central with its PostgreSQL running).
 */
export function benchRun() {
  const started = [];
  const dirs = [];
  process.on('exit', () => {
    for (const p of started) if (p.exitCode === null) p.kill('SIGTERM');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  for (const ev of ['uncaughtException', 'unhandledRejection']) {
    process.on(ev, (err) => {
      console.error(err);
      process.exit(1);
    });
  }
  /** A temp directory, under `base` when given (a tmpfs, say), removed at exit. */
  const tmp = (prefix, base = tmpdir()) => {
    const d = mkdtempSync(join(base, prefix));
    dirs.push(d);
    return d;
  };
  return { started, tmp };
}

/** Runs `dist/main.cjs ARGS` and returns its last line of output. */
export const cli = (args) =>
  execFileSync(process.execPath, ['dist/main.cjs', ...args], { cwd: root, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop();

/** SIGTERM, resolved once the process has exited. */
export const stop = (p) =>
  new Promise((r) => {
    if (p.exitCode !== null) return r();
    p.once('exit', r);
    p.kill('SIGTERM');
  });

/** A process and all its descendants (the central's PostgreSQL backends are its grandchildren). */
export function treeOf(pid) {
  let children = [];
  try {
    children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    // no children
  }
  return [pid, ...children.flatMap(treeOf)];
}

/**
 * `central serve --demo` niced on core 1 (beside the load generator), added to `started`; resolves once listening.
 * CENTRAL_NODE_ARGS passes flags to the central's node, as BOX_NODE_ARGS to the box's (scripts/lib/box.mjs).
 */
export function startCentral(started, dataDir, { port = 0, args = [] } = {}) {
  const nodeArgs = (process.env.CENTRAL_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const proc = spawn(
    'nice',
    [
      '-n',
      '10',
      'taskset',
      '-c',
      '1',
      process.execPath,
      ...nodeArgs,
      'dist/main.cjs',
      'central',
      'serve',
      '--demo',
      ...args,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--data-dir',
      dataDir,
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  started.push(proc);
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`central exited with ${code}`)));
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const entry = JSON.parse(line);
      if (entry.msg === 'central listening')
        resolve({ proc, port: entry.port, base: `http://127.0.0.1:${entry.port}` });
    });
  });
}

/**
 * A free port below the ephemeral range: a central comes back on the same port after its outage or restart, and
 * a port that port 0 handed out may meanwhile be taken by some client connection's local end.
 */
export async function freePort() {
  const { createServer } = await import('node:net');
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const ok = await new Promise((resolve) => {
      const s = createServer()
        .once('error', () => resolve(false))
        .listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (ok) return port;
  }
}
