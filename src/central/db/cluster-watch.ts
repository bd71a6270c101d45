import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../../log.js';
import { ProcessError } from '../../shared/errors.js';

/** The embedded cluster as the watch drives it (src/central/db/embedded.ts). */
export interface Cluster {
  /** Starts the postmaster: resolves once it accepts connections, rejects when it exits before. */
  start(): Promise<void>;
  /** The postmaster started last, running or not. */
  process(): ChildProcess | undefined;
  /** PostgreSQL's last lines, for the log and for the error of a cluster that does not come back. */
  lastLines(): string;
}

export interface WatchOptions {
  log?: Logger;
  /** Start the cluster again when it dies (`serve`); a CLI command's own cluster is only stopped. */
  restart: boolean;
  /** The wait before each restart in a row: min, doubling, up to max. */
  backoff?: { minMs: number; maxMs: number };
  /** Restarts in a row that fail before the central gives up (exit 69 for its supervisor). */
  attempts?: number;
  /** How long a fast shutdown (SIGINT) may take before SIGKILL; PostgreSQL's crash recovery copes with either. */
  stopTimeoutMs?: number;
}

export interface WatchedCluster {
  /** False from the moment the postmaster died until a restart has it accepting connections again. */
  up(): boolean;
  /** Rejects with exit 69 once the cluster died and `attempts` restarts in a row failed; never resolves. */
  failed: Promise<never>;
  /** Stops the postmaster (and any restart under way) within about stopTimeoutMs, whatever its state. */
  stop(): Promise<void>;
}

/** 1 s, 2, 4, 8, 15, 15: about 45 s of restarts before the central exits for its supervisor. */
const BACKOFF = { minMs: 1000, maxMs: 15_000 };
const ATTEMPTS = 6;
const STOP_TIMEOUT_MS = 10_000;
const KILL_WAIT_MS = 2000;

/**
 * Keeps an embedded PostgreSQL running under a serving central (docs/sync.md "When its PostgreSQL dies"). A
 * postmaster that dies (kill -9, the OOM killer, a crash) is started again on the same data directory
 * and port, after a backoff: PostgreSQL replays its WAL (crash recovery), so every committed transaction is
 * there; the pool, the readiness probe and the LISTEN connection reconnect by themselves. Meanwhile `up()` is
 * false (/readyz answers 503 at once) and requests fail fast with 503 and Retry-After (pool.ts
 * databaseUnavailable). A first restart that fails is usually the killed postmaster's backends still holding
 * its shared memory: they exit within moments, so the next attempt starts. Restarts that keep failing end in
 * `failed`: the central stops and exits 69, and its supervisor starts it again (docs/operations.md "Exit codes").
 */
export function watchCluster(cluster: Cluster, o: WatchOptions): WatchedCluster {
  const backoff = o.backoff ?? BACKOFF;
  const attempts = o.attempts ?? ATTEMPTS;
  const stopTimeoutMs = o.stopTimeoutMs ?? STOP_TIMEOUT_MS;
  let up = true;
  let stopping = false;
  let restarting: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let giveUp!: (err: ProcessError) => void;
  const failed = new Promise<never>((_, reject) => (giveUp = reject));
  failed.catch(() => undefined);

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stopping) return resolve();
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  function watch(child: ChildProcess | undefined): void {
    child?.once('exit', (code, signal) => {
      if (stopping || child !== cluster.process()) return;
      up = false;
      o.log?.error(
        { pid: child.pid, code, signal, postgres: cluster.lastLines() },
        'the embedded PostgreSQL died: answering 503 until it is started again',
      );
      if (o.restart) restarting ??= restart().finally(() => (restarting = undefined));
      else giveUp(new ProcessError('unavailable', "the central's embedded PostgreSQL died"));
    });
  }

  async function restart(): Promise<void> {
    for (let attempt = 1; attempt <= attempts; attempt++) {
      await sleep(Math.min(backoff.maxMs, backoff.minMs * 2 ** (attempt - 1)));
      if (stopping) return;
      try {
        await cluster.start();
      } catch {
        if (stopping) return;
        o.log?.warn({ attempt, postgres: cluster.lastLines() }, 'the embedded PostgreSQL did not start again yet');
        continue;
      }
      // Stopped while it was starting: this postmaster is the last one, stopped here (stop() saw none yet).
      if (stopping) return void (await stopProcess(cluster.process(), stopTimeoutMs));
      watch(cluster.process());
      up = true;
      o.log?.info({ attempt, pid: cluster.process()?.pid }, 'the embedded PostgreSQL is running again');
      return;
    }
    giveUp(
      new ProcessError(
        'unavailable',
        `the central's embedded PostgreSQL died and did not start again (${attempts} attempts): ${cluster.lastLines()}`,
      ),
    );
  }

  watch(cluster.process());
  return {
    up: () => up && !stopping,
    failed,
    async stop() {
      stopping = true;
      wake?.();
      await stopProcess(cluster.process(), stopTimeoutMs);
      // A start under way ends with its postmaster stopped (above, or by the loop once it is up).
      await Promise.race([restarting, new Promise((r) => setTimeout(r, stopTimeoutMs + KILL_WAIT_MS).unref())]);
    },
  };
}

/** SIGINT (PostgreSQL's fast shutdown), SIGKILL past the timeout; at once when it is not running. */
export async function stopProcess(child: ChildProcess | undefined, timeoutMs: number): Promise<void> {
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  if (!running()) return;
  const exited = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
  const within = (ms: number) =>
    Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
  child!.kill('SIGINT');
  if (await within(timeoutMs)) return;
  child!.kill('SIGKILL');
  await within(KILL_WAIT_MS);
}
