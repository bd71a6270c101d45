import type { Logger } from '../log.js';

/**
 * A long-running part of the box or the central (the command queue, the spooler, the checkpointer, the sockets,
 * the HTTP listener, the loops to the central, the scheduled jobs, the systemd notifier). Modelled on Zero's
 * services (zero-cache `runUntilKilled`, `RunningState`): run() lasts as long as the part does, so a part that
 * dies is noticed (docs/architecture.md "Wiring and lifecycle").
 */
export interface Service {
  /** Runs until stop() is called (then resolves) or the service fails (then rejects). */
  run(): Promise<void>;
  /** Take nothing new and finish what was accepted; optional. */
  drain?(): Promise<void> | void;
  stop(): Promise<void> | void;
}

/**
 * What happens when a service's run() rejects (or resolves unasked): 'restart' runs it again after an exponential
 * backoff; 'fatal' makes the process report not ready and leave with a failure, for systemd to restart it.
 */
export type FailurePolicy = 'restart' | 'fatal';

export interface ServiceEntry {
  name: string;
  service: Service;
  policy: FailurePolicy;
  /** Resolves once the next service may start (default: as soon as run() was called). */
  ready?(): Promise<void>;
  /** How long its drain, and then its stop, may take at shutdown before the next part goes on without it. */
  deadlineMs?: number;
}

export interface ServiceFailure {
  name: string;
  err: unknown;
}

export interface RuntimeOptions {
  log: Logger;
  /** Default for entries without their own deadline. */
  deadlineMs?: number;
  /** The 'restart' policy's backoff: min, doubling per failure in a row, up to max. */
  backoff?: { minMs: number; maxMs: number };
  /** Told once, when a 'fatal' service fails (after the runtime has marked itself failed). */
  onFatal?(failure: ServiceFailure): void;
  /** Told each time a 'restart' service failed and is to run again (the box counts them in its metrics). */
  onRestart?(name: string): void;
}

/** How a service's start is followed: a failure before it is ready fails the whole start. */
interface Starting {
  ready: boolean;
  failed(err: unknown): void;
  /** The failure that came before the service was ready, kept for start() to throw. */
  early?: { err: unknown };
}

const DEADLINE_MS = 10_000;
const BACKOFF = { minMs: 1000, maxMs: 60_000 };

/** The delay before the `attempt`th restart in a row (1-based): min, 2 min, 4 min, ... capped at max. */
export function restartDelay(attempt: number, backoff: { minMs: number; maxMs: number }): number {
  return Math.min(backoff.maxMs, backoff.minMs * 2 ** Math.min(attempt - 1, 30));
}

/**
 * Runs services in the order given and stops them in the reverse order. Made first (so readiness can ask it),
 * given its list once every part exists: `await runtime.start([...])`.
 */
export function createRuntime(options: RuntimeOptions) {
  const { log } = options;
  const backoff = options.backoff ?? BACKOFF;
  const entries: ServiceEntry[] = [];
  const supervisors: Promise<void>[] = [];
  let stopping = false;
  let stopped: Promise<void> | undefined;
  let fatal: ServiceFailure | undefined;
  const wakeSleepers = new Set<() => void>();

  function fail(name: string, err: unknown): void {
    if (fatal) return;
    fatal = { name, err };
    log.fatal({ err, service: name }, 'a service failed: the process reports not ready and stops');
    options.onFatal?.(fatal);
  }

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wakeSleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wakeSleepers.add(done);
    });

  /**
   * Runs one service, again after each failure while its policy says restart. A failure before the service is
   * ready goes to `starting` (the start fails with it) instead, and is kept there: start() may resume after its
   * `ready` won the race but before it marked the service ready, and must still see the failure.
   */
  async function supervise(entry: ServiceEntry, starting: Starting): Promise<void> {
    for (let attempt = 1; ; ) {
      const since = Date.now();
      let err: unknown;
      try {
        await entry.service.run();
        if (stopping) return;
        err = new Error(`${entry.name} ended without being stopped`);
      } catch (e) {
        err = e;
      }
      if (!starting.ready) {
        starting.early = { err };
        return starting.failed(err);
      }
      if (stopping) {
        log.warn({ err, service: entry.name }, 'service failed while stopping');
        return;
      }
      if (entry.policy === 'fatal') return fail(entry.name, err);
      // A run that lasted longer than the longest wait was a recovery: the backoff starts again.
      if (Date.now() - since > backoff.maxMs) attempt = 1;
      const delayMs = restartDelay(attempt++, backoff);
      options.onRestart?.(entry.name);
      log.error(
        { err, service: entry.name, attempt: attempt - 1, retryInMs: delayMs },
        'service failed: restarting it',
      );
      await sleep(delayMs);
      if (stopping) return;
      log.info({ service: entry.name }, 'service restarting');
    }
  }

  /**
   * Waits for `work` at most the deadline; a part that hangs is named in the log, and shutdown goes on. True when
   * the work ended in time (failed or not).
   */
  async function bounded(
    entry: ServiceEntry,
    phase: 'drain' | 'stop' | 'end',
    work: () => Promise<void> | void,
  ): Promise<boolean> {
    const deadlineMs = entry.deadlineMs ?? options.deadlineMs ?? DEADLINE_MS;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), deadlineMs)));
    try {
      const outcome = await Promise.race([
        Promise.resolve()
          .then(work)
          .then(() => 'done' as const),
        late,
      ]);
      if (outcome === 'late') {
        log.error({ service: entry.name, phase, deadlineMs }, 'service did not finish in time: going on without it');
        return false;
      }
      return true;
    } catch (err) {
      log.error({ err, service: entry.name, phase }, 'service failed to stop cleanly');
      return true;
    } finally {
      clearTimeout(timer);
    }
  }

  const stop = (): Promise<void> => (stopped ??= stopAll());

  async function stopAll(): Promise<void> {
    stopping = true;
    for (const wake of [...wakeSleepers]) wake();
    const late = new Set<ServiceEntry>();
    for (const entry of [...entries].reverse()) {
      const { service } = entry;
      if (service.drain) await bounded(entry, 'drain', () => service.drain!());
      if (await bounded(entry, 'stop', () => service.stop())) log.debug({ service: entry.name }, 'service stopped');
      else late.add(entry);
    }
    // Each run() ends once its stop() has. A part whose stop() was late is left behind (its run() may never end),
    // and so is a run() that outlives its stop() by a deadline: stopping never hangs on one part.
    await Promise.all(
      entries.map((entry, i) => (late.has(entry) ? undefined : bounded(entry, 'end', () => supervisors[i]))),
    );
  }

  return {
    /**
     * Starts each service in turn, waiting for its `ready` (a listener bound, say) before the next. A service that
     * fails before it is ready fails the start: what already runs is stopped, and the error is thrown.
     */
    async start(list: ServiceEntry[]): Promise<void> {
      if (entries.length > 0 || stopping) throw new Error('the runtime was started already');
      for (const entry of list) {
        entries.push(entry);
        const starting: Starting = { ready: false, failed: () => {} };
        const failed = new Promise<never>((_, reject) => (starting.failed = reject));
        failed.catch(() => undefined);
        supervisors.push(supervise(entry, starting));
        try {
          await Promise.race([entry.ready?.() ?? Promise.resolve(), failed]);
          starting.ready = true;
          // Failed after `ready` won the race, before this line: a failure to start all the same.
          if (starting.early) throw starting.early.err;
        } catch (err) {
          starting.ready = true;
          await stop();
          throw err;
        }
      }
      log.debug({ services: list.map((e) => e.name) }, 'services started');
    },
    /** Drains, then stops, each service in the reverse order (each within its deadline); once, however often called. */
    stop,
    /** The 'fatal' service that failed, if any (/readyz says so: src/modules/health/readiness.ts). */
    failure: (): ServiceFailure | undefined => fatal,
  };
}
export type Runtime = ReturnType<typeof createRuntime>;

/**
 * A Service for a part driven by its own timers and callbacks: run() calls `start` and then waits for stop().
 * Used by parts that have nothing of their own to fail in between (they log and retry inside). `started`
 * resolves once `start` has (an entry's `ready`, when the next service needs it done).
 */
export function serviceOf(part: {
  start?(): void | Promise<void>;
  drain?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}): Service & { started(): Promise<void> } {
  let release: (() => void) | undefined;
  let begun!: () => void;
  const started = new Promise<void>((resolve) => (begun = resolve));
  return {
    async run() {
      const stopped = new Promise<void>((resolve) => (release = resolve));
      await part.start?.();
      begun();
      await stopped;
    },
    ...(part.drain ? { drain: () => part.drain!() } : {}),
    async stop() {
      try {
        await part.stop?.();
      } finally {
        release?.();
      }
    },
    started: () => started,
  };
}

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
