import { performance } from 'node:perf_hooks';
import type { Logger } from '../../log.js';
import { type CommandErrorCode, commandProblem, CommandRejected, type ErrorDetail } from '../../shared/errors.js';
import type { OutgoingFrame } from '../events/event-store.js';
import type { Publisher } from '../events/publisher.js';
import type { StoredKey } from './idempotency-repo.js';
import type { Command, CommandRecord, OrderRepo } from './repo.js';

export interface CommandHandler {
  /** Applies a command and appends its events; throws CommandRejected for a business-rule failure. */
  process(cmd: Command, now: number): OutgoingFrame[];
  /** Appends the NOTIFICATION of a rejected command. */
  notify(cmd: Command, codes: ErrorDetail<CommandErrorCode>[], now: number): OutgoingFrame[];
}

/** A processed command as the metrics see it (src/modules/health/metrics.ts). */
export interface ProcessedCommand {
  kind: string;
  outcome: 'applied' | 'rejected' | 'failed';
  confirmedMs: number;
}

/**
 * Told after each transaction of the queue commits (never inside one): the box's metrics. Seconds are the whole
 * transaction's and its COMMIT's alone (with synchronous=FULL, the fsync of the WAL).
 */
export interface QueueObserver {
  confirmed(kinds: readonly string[], transactionSeconds: number, commitSeconds: number): void;
  /** `pushedMs`: when the batch's frames went to the sockets. */
  processed(
    commands: readonly ProcessedCommand[],
    transactionSeconds: number,
    commitSeconds: number,
    pushedMs: number,
  ): void;
}

export interface QueueDeps {
  repo: OrderRepo;
  handler: CommandHandler;
  /** Sends the frames of processed commands, in commit order, once they are durable. */
  publisher: Publisher;
  /** Called once processed commands are on the disk (the printers then take their jobs). */
  onApplied?(): void;
  log: Logger;
  now(): number;
  observer?: QueueObserver;
}

interface Waiting {
  record: Command;
  key: StoredKey | undefined;
  resolve(): void;
  reject(err: unknown): void;
}

const BATCH = 256;
const RETRY_MS = 1000;

/**
 * The durable command queue (docs/architecture.md "Durability and speed"). The commands that arrive in one turn
 * of the event loop are stored and applied in one transaction, each applied in its own savepoint, committed
 * without waiting for the disk; one fsync of the WAL off the event loop (src/db/wal-sync.ts) then makes the
 * batch durable, and only after it are the 200s written and the events pushed. Commands that arrive while that
 * fsync is in flight form the next batch: one fsync per batch, however many commands it holds.
 * If applying fails for a reason of the machine (disk full, I/O error), the commands are stored alone and applied
 * by a retry; commands confirmed before a crash are applied at the next start. A command's Idempotency-Key is
 * stored in the same transaction as the command: both or neither.
 */
export function createCommandQueue(deps: QueueDeps) {
  let waiting: Waiting[] = [];
  let processScheduled = false;
  let retryTimer: NodeJS.Timeout | undefined;
  /** A batch is committed and waits for its fsync. */
  let syncing = false;
  /** The checkpointer asked for a quiet moment (src/db/checkpointer.ts): no batch commits until it is over. */
  let held = false;
  /** Drains asked for during a quiet moment, run at its release. */
  const afterRelease: (() => void)[] = [];
  /** The last processing transaction failed (disk full, I/O error): retried every RETRY_MS until one commits. */
  let failing = false;

  /** Runs `fn` in a transaction of `run`; returns the seconds of the whole and of its COMMIT (the time after `fn`). */
  function timed(run: (fn: () => void) => void, fn: () => void): [number, number] {
    const start = performance.now();
    let bodyEnd = start;
    run(() => {
      fn();
      bodyEnd = performance.now();
    });
    const end = performance.now();
    return [(end - start) / 1000, (end - bodyEnd) / 1000];
  }

  function store(batch: Waiting[]): void {
    for (const w of batch) {
      deps.repo.insertCommand(w.record);
      if (w.key) deps.repo.idempotency.insert(w.key);
    }
  }

  /** Stores the batch and applies what is pending in one transaction; the answers follow the fsync. */
  function flushConfirmations(): void {
    if (waiting.length === 0 || held) return;
    const batch = waiting;
    waiting = [];
    const frames: OutgoingFrame[] = [];
    const done: ProcessedCommand[] = [];
    let backlog = false;
    let seconds: [number, number];
    try {
      seconds = timed(deps.repo.relaxedTransaction, () => {
        if (retryTimer) {
          store(batch);
        } else if (deps.repo.firstPending() !== undefined) {
          // Older commands are waiting (a backlog after a failure): they go first.
          backlog = true;
          store(batch);
          takePending(frames, done);
        } else {
          // The usual case: each command applied as it is in memory, then stored with its outcome.
          for (const w of batch) {
            const now = deps.now();
            const applied = applyOne(w.record, now, done);
            deps.repo.insertProcessed(w.record, applied.outcome, now);
            if (w.key) deps.repo.idempotency.insert(w.key);
            frames.push(...applied.frames);
          }
        }
      });
    } catch (err) {
      // Nothing of the transaction was kept. Applying failed for a reason of the machine (a command's own failure
      // is caught in its savepoint), or storing did: store the commands alone, which fails again in the second case.
      deps.log.error({ err }, 'processing order commands failed; storing them alone and retrying');
      storeAlone(batch);
      return;
    }
    if (!retryTimer) failing = false;
    afterSync(frames, (err) => {
      if (answer(batch, seconds, err)) afterProcessed(done, seconds);
    });
    // A backlog bigger than one BATCH goes on in the next turn; the usual path leaves nothing pending.
    if (backlog && done.length === BATCH) scheduleProcessing();
  }

  /**
   * Answers a batch once the fsync covers it. Commands confirmed meanwhile are not committed at once: they could
   * only be covered by the fsync after this one anyway, so they gather and commit together when it is done,
   * one transaction for all of them (fewer pages written per command, the more so the busier the box).
   */
  function afterSync(frames: OutgoingFrame[], then: (err?: Error) => void): void {
    syncing = true;
    deps.publisher.publishAfterSync(frames, (err) => {
      syncing = false;
      then(err);
      flushConfirmations();
    });
  }

  /** The batch's commands without applying them (the apply failed for a reason of the machine). */
  function storeAlone(batch: Waiting[]): void {
    let seconds: [number, number];
    try {
      seconds = timed(deps.repo.relaxedTransaction, () => store(batch));
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    retryLater();
    afterSync([], (err) => answer(batch, seconds, err));
  }

  /** Answers the batch's requests once its fsync is done (or failed); true when they were confirmed. */
  function answer(batch: Waiting[], seconds: [number, number], err: Error | undefined): boolean {
    for (const w of batch)
      if (err) w.reject(err);
      else w.resolve();
    if (err) return false;
    deps.observer?.confirmed(
      batch.map((w) => w.record.kind),
      ...seconds,
    );
    return true;
  }

  function afterProcessed(done: ProcessedCommand[], seconds: [number, number]): void {
    if (done.length === 0) return;
    deps.onApplied?.();
    deps.observer?.processed(done, ...seconds, deps.now());
  }

  function takePending(frames: OutgoingFrame[], done: ProcessedCommand[]): void {
    for (const cmd of deps.repo.pendingCommands(0, BATCH)) frames.push(...processOne(cmd, done));
  }

  function scheduleProcessing(): void {
    if (processScheduled || retryTimer) return;
    processScheduled = true;
    setImmediate(() => {
      processScheduled = false;
      // A retry or a backlog commits nothing during a quiet moment either: it goes on at the release.
      if (held) {
        afterRelease.push(scheduleProcessing);
        return;
      }
      if (processBatch() === BATCH) scheduleProcessing();
    });
  }

  function retryLater(): void {
    failing = true;
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      scheduleProcessing();
    }, RETRY_MS);
  }

  /**
   * Processes up to BATCH pending commands in one durable transaction (at start, after a retry, a backlog);
   * returns how many it took.
   */
  function processBatch(): number {
    const frames: OutgoingFrame[] = [];
    const done: ProcessedCommand[] = [];
    let seconds: [number, number];
    try {
      seconds = timed(
        (fn) => deps.repo.transaction(fn),
        () => takePending(frames, done),
      );
    } catch (err) {
      // The database refused the whole batch (disk full, I/O error): nothing was applied; try again later.
      deps.log.error({ err }, 'processing order commands failed; retrying');
      retryLater();
      return 0;
    }
    failing = false;
    deps.publisher.publish(frames);
    afterProcessed(done, seconds);
    return done.length;
  }

  /** Applies a stored command and records its outcome (the backlog's path). */
  function processOne(cmd: CommandRecord, done: ProcessedCommand[]): OutgoingFrame[] {
    const now = deps.now();
    const applied = applyOne(cmd, now, done);
    deps.repo.markProcessed(cmd.seq, applied.outcome, now);
    return applied.frames;
  }

  /** Applies one command in its savepoint; `done` gets its outcome (only the batch can still roll it back). */
  function applyOne(
    cmd: Command,
    now: number,
    done: ProcessedCommand[],
  ): {
    frames: OutgoingFrame[];
    outcome: ProcessedCommand['outcome'];
  } {
    try {
      const frames = deps.repo.savepoint(() => deps.handler.process(cmd, now));
      done.push({ kind: cmd.kind, outcome: 'applied', confirmedMs: cmd.confirmedMs });
      return { frames, outcome: 'applied' };
    } catch (err) {
      let codes: ErrorDetail<CommandErrorCode>[];
      let outcome: ProcessedCommand['outcome'] = 'rejected';
      if (err instanceof CommandRejected) {
        codes = err.codes;
      } else if (isEnvironmentalDbError(err)) {
        // Disk full, I/O error, lock timeout: not this command's fault. Fail the whole batch so nothing is
        // committed, and the command is tried again instead of being marked failed.
        throw err;
      } else {
        deps.log.error({ err, correlationId: cmd.correlationId, kind: cmd.kind }, 'order command failed');
        codes = [commandProblem('internal', 'internal error', [cmd.correlationId])];
        outcome = 'failed';
      }
      done.push({ kind: cmd.kind, outcome, confirmedMs: cmd.confirmedMs });
      return { frames: deps.handler.notify(cmd, codes, now), outcome };
    }
  }

  /** Processes everything pending now (at start, after a crash; and at shutdown). */
  function drain(): void {
    held = false;
    flushConfirmations();
    while (processBatch() === BATCH);
  }

  return {
    /** Commands confirmed before a crash or power cut are applied before the first new request. */
    start: drain,
    /** Resolves once the command is committed to disk; the caller then writes the confirmation. */
    confirm(record: Command, key?: StoredKey): Promise<void> {
      return new Promise((resolve, reject) => {
        waiting.push({ record, key, resolve, reject });
        // While a batch waits for its fsync, the commands gather and commit once it is done (afterSync).
        if (waiting.length === 1 && !syncing && !held) setImmediate(flushConfirmations);
      });
    },
    /**
     * Applies what is pending; resolves once all of it is on the disk and its answers are written. During a
     * quiet moment (hold) that waits for the release, which the checkpointer gives within 100 ms (or once the
     * restart of the WAL it had begun by then is committed).
     */
    drain(): Promise<void> {
      return new Promise((resolve) => {
        const run = (): void => {
          drain();
          deps.publisher.publishAfterSync([], () => resolve());
        };
        if (held) afterRelease.push(run);
        else run();
      });
    },
    stop(): void {
      clearTimeout(retryTimer);
    },
    /** Commits nothing new until release (the checkpointer's quiet moment; confirmations gather meanwhile). */
    hold(): void {
      held = true;
    },
    release(): void {
      held = false;
      for (const then of afterRelease.splice(0)) then();
      if (!syncing) flushConfirmations();
    },
    /** True while the database refuses the queue's transactions (docs/operations.md "Health": /readyz says why). */
    failing: (): boolean => failing,
  };
}
export type CommandQueue = ReturnType<typeof createCommandQueue>;

/** SQLite errors of the machine rather than of the command (a constraint error is a bug: the command fails). */
function isEnvironmentalDbError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') && !code.startsWith('SQLITE_CONSTRAINT');
}
