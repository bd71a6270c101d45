import { CentralError, type ClientOptions } from './client.js';
import type { Device } from './enrolment/device.js';

export interface CentralLoopOptions {
  retryMinMs: number;
  retryMaxMs: number;
  /** How often a box that is not enrolled looks for its device file (written by `sync enrol`). */
  enrolPollMs: number;
  /** A request to the central that takes longer is abandoned (a failure like any other). */
  requestTimeoutMs: number;
  /** wake() runs the step within this long, so a burst of wakes is one step (default 0). */
  wakeDelayMs?: number;
}

export interface StepContext {
  device: Device;
  /** What every request of the step passes to the client: the request timeout and the loop's stop. */
  client: ClientOptions;
}

export interface CentralLoopDeps {
  options: CentralLoopOptions;
  /** The device file; undefined while the box is not enrolled. */
  loadDevice(): Device | undefined;
  /**
   * One step against the central. Resolves with the milliseconds until the next step (undefined: not before
   * wake()); a throw is a failure, retried after the backoff (docs/sync.md "Talking to the central").
   */
  step(ctx: StepContext): Promise<number | undefined>;
  /** The step's own failures to retry, besides the central's answers and the machine's errors; anything else is a bug. */
  retryable?(err: unknown): boolean;
  /** Records and logs a failure; called before the wait. */
  failed(err: unknown, retryInMs: number): void;
  now?(): number;
  random?(): number;
}

/**
 * A service as the lifecycle runtime runs it: run() until stop() is called (then it resolves) or the loop fails
 * (then it rejects); wake() runs the step early, within wakeDelayMs, unless a failure's backoff holds (the retry
 * comes anyway).
 */
export interface CentralLoop {
  run(): Promise<void>;
  stop(): Promise<void>;
  wake(): void;
}

/** 401 and 403: the central refuses this device (revoked, or not the key it registered). 426: upgrade the box. */
/** A 429 or 503 with Retry-After: the central answered, busy or restarting, and said when to come back. */
const toldWhen = (err: unknown): err is CentralError & { retryAfterS: number } =>
  err instanceof CentralError && err.retryAfterS !== undefined && (err.status === 429 || err.status === 503);

export const isRefusal = (err: unknown): boolean =>
  err instanceof CentralError && [401, 403, 426].includes(err.status) && !stale(err);

/**
 * A signed request stamped outside the window of the device's clock (docs/sync.md "Signed requests"): the box's
 * clock was set before its next hello measured it again, which the sender's next hello mends; retried as a failure.
 */
const stale = (err: CentralError): boolean => err.body?.codes?.[0]?.code === 'requestStale';

/**
 * The wait before retry number `attempt` (1 for the first), by the rule of docs/sync.md "Talking to the central":
 * a 429 or 503 Retry-After wins (held between retryMinMs and retryMaxMs), a refusal waits retryMaxMs, and
 * anything else waits between retryMinMs and a step doubling from retryMinMs up to retryMaxMs, uniformly
 * (so the first retry waits retryMinMs, and a hundred boxes failing together spread out from the second on).
 */
export function retryDelay(
  err: unknown,
  attempt: number,
  options: CentralLoopOptions,
  random: () => number = Math.random,
): number {
  const { retryMinMs: min } = options;
  const max = Math.max(min, options.retryMaxMs);
  if (toldWhen(err)) return Math.min(max, Math.max(min, err.retryAfterS * 1000));
  if (isRefusal(err)) return max;
  const step = Math.min(max, min * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  return Math.round(min + random() * (step - min));
}

/** SQLite and file system errors of the machine (a full disk, a failing card): not bugs, so retried. */
function isEnvironmental(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return (code.startsWith('SQLITE_') && !code.startsWith('SQLITE_CONSTRAINT')) || /^E[A-Z]+$/.test(code);
}

class DeviceFileError extends Error {}

/**
 * The one loop of every part that talks to the central (docs/sync.md "Talking to the central"): it waits for
 * enrolment, runs the step, retries failures with the shared backoff, and runs early when woken. A step that
 * throws something that is neither the central's answer nor the machine's error (a bug) ends run() with it.
 */
export function createCentralLoop(deps: CentralLoopDeps): CentralLoop {
  const { options } = deps;
  // Waits are durations: a clock no one sets, so a wall clock set back a year never stretches one (docs/sync.md "Clocks").
  const now = deps.now ?? (() => performance.now());
  const wakeDelayMs = options.wakeDelayMs ?? 0;
  const abort = new AbortController();
  const client: ClientOptions = { requestTimeoutMs: options.requestTimeoutMs, signal: abort.signal };
  let stopped = false;
  let running: Promise<void> | undefined;
  let stepping = false;
  let wokenWhileStepping = false;
  /** The wait in progress: when it ends, whether wake() may shorten it, and how to end it. */
  let wait: { dueAt: number; wakeable: boolean; timer?: NodeJS.Timeout; done(): void } | undefined;

  const failure = (err: unknown) =>
    err instanceof CentralError ||
    err instanceof DeviceFileError ||
    isEnvironmental(err) ||
    (deps.retryable?.(err) ?? false);

  function sleep(ms: number, wakeable: boolean): Promise<void> {
    return new Promise((resolve) => {
      if (stopped) return resolve();
      wait = {
        dueAt: now() + ms,
        wakeable,
        done: () => {
          clearTimeout(wait?.timer);
          wait = undefined;
          resolve();
        },
      };
      arm(ms);
    });
  }

  function arm(ms: number): void {
    if (!wait) return;
    clearTimeout(wait.timer);
    wait.dueAt = now() + ms;
    // An endless wait ends at wake() or stop() only (setTimeout would fire at once past 2^31 - 1 ms).
    if (Number.isFinite(ms)) wait.timer = setTimeout(wait.done, Math.max(0, ms));
  }

  function device(): Device | undefined {
    try {
      return deps.loadDevice();
    } catch (err) {
      throw new DeviceFileError(`the device file cannot be read (${(err as Error).message})`);
    }
  }

  /**
   * A refused device's wait (retryMaxMs), cut short when the device file changes: the box was enrolled again
   * (docs/sync.md "Enrolling again"), and its new identity is tried at once, not minutes later.
   */
  async function refusedWait(ms: number, refused: Device | undefined): Promise<void> {
    const until = now() + ms;
    for (let left = ms; left > 0 && !stopped; left = until - now()) {
      await sleep(Math.min(left, options.enrolPollMs), false);
      let current: Device | undefined;
      try {
        current = deps.loadDevice();
      } catch {
        continue; // a file being written: looked at again at the next poll
      }
      if (current && (current.deviceId !== refused?.deviceId || current.keyId !== refused.keyId)) return;
    }
  }

  async function loop(): Promise<void> {
    let attempt = 0;
    while (!stopped) {
      let next: number | undefined;
      let enrolled: Device | undefined;
      stepping = true;
      wokenWhileStepping = false;
      try {
        // Read at every step (a stat while unchanged): a box enrolled again goes on under its new identity.
        enrolled = device();
        next = enrolled ? await deps.step({ device: enrolled, client }) : options.enrolPollMs;
        attempt = 0;
      } catch (err) {
        if (stopped) break;
        if (!failure(err)) throw err;
        // Being told when to come back is not a failed attempt: a box sent away a few times by a central busy
        // after a restart would otherwise wait minutes at the next network error.
        if (!toldWhen(err)) attempt++;
        const delay = retryDelay(err, attempt, options, deps.random);
        deps.failed(err, delay);
        // A wake does not cut a backoff short: the retry takes along whatever woke it.
        stepping = false;
        if (isRefusal(err)) await refusedWait(delay, enrolled);
        else await sleep(delay, false);
        continue;
      } finally {
        stepping = false;
      }
      if (wokenWhileStepping) next = Math.min(next ?? Number.POSITIVE_INFINITY, wakeDelayMs);
      await sleep(next ?? Number.POSITIVE_INFINITY, true);
    }
  }

  return {
    run(): Promise<void> {
      // One run at a time; after a failure the runtime may run it again (its restart policy), afresh.
      running ??= loop().finally(() => {
        running = undefined;
      });
      return running;
    },
    wake(): void {
      if (stopped) return;
      if (stepping) wokenWhileStepping = true;
      else if (wait?.wakeable && now() + wakeDelayMs < wait.dueAt) arm(wakeDelayMs);
    },
    /** Ends the request in flight and the wait; resolves once run() has returned. */
    async stop(): Promise<void> {
      stopped = true;
      abort.abort();
      wait?.done();
      await running?.catch(() => undefined);
    },
  };
}
