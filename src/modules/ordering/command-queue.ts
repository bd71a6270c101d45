import { performance } from 'node:perf_hooks';
import type { Logger } from '../../log.js';
import { type CommandErrorCode, commandProblem, CommandRejected, type ErrorDetail } from '../../shared/errors.js';
import type { OutgoingFrame } from '../events/event-store.js';
import type { StoredKey } from './idempotency-repo.js';
import type { CommandRecord, OrderRepo } from './repo.js';

export interface CommandHandler {
  /** Applies a command and appends its events; throws CommandRejected for a business-rule failure. */
  process(cmd: CommandRecord, now: number): OutgoingFrame[];
  /** Appends the NOTIFICATION of a rejected command. */
  notify(cmd: CommandRecord, codes: ErrorDetail<CommandErrorCode>[], now: number): OutgoingFrame[];
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
  processed(commands: readonly ProcessedCommand[], transactionSeconds: number, commitSeconds: number, pushedMs: number): void;
}

export interface QueueDeps {
  repo: OrderRepo;
  handler: CommandHandler;
  push(frames: OutgoingFrame[]): void;
  log: Logger;
  now(): number;
  observer?: QueueObserver;
}

interface Waiting {
  record: Omit<CommandRecord, 'seq'>;
  key: StoredKey | undefined;
  resolve(): void;
  reject(err: unknown): void;
}

const BATCH = 256;
const RETRY_MS = 1000;

/**
 * The durable command queue. Confirmations that arrive in the same tick are committed together (group
 * commit: one fsync for the batch, synchronous=FULL) before any of their 200s is written. Processing
 * follows in confirmation order, each command atomic in its own savepoint, and the events are pushed only
 * after their transaction commits. Commands confirmed before a crash are processed at the next start.
 * A command's Idempotency-Key is stored in the same transaction as the command: both or neither.
 */
export function createCommandQueue(deps: QueueDeps) {
  let waiting: Waiting[] = [];
  let processScheduled = false;
  let retryTimer: NodeJS.Timeout | undefined;
  /** The last processing transaction failed (disk full, I/O error): retried every RETRY_MS until one commits. */
  let failing = false;

  /** Runs `fn` in one transaction; returns the seconds of the whole and of its COMMIT (the time after `fn`). */
  function timedTransaction(fn: () => void): [number, number] {
    const start = performance.now();
    let bodyEnd = start;
    deps.repo.transaction(() => {
      fn();
      bodyEnd = performance.now();
    });
    const end = performance.now();
    return [(end - start) / 1000, (end - bodyEnd) / 1000];
  }

  function flushConfirmations(): void {
    const batch = waiting;
    waiting = [];
    let seconds: [number, number];
    try {
      seconds = timedTransaction(() => {
        for (const w of batch) {
          deps.repo.insertCommand(w.record);
          if (w.key) deps.repo.idempotency.insert(w.key);
        }
      });
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    for (const w of batch) w.resolve();
    deps.observer?.confirmed(batch.map((w) => w.record.kind), ...seconds);
    scheduleProcessing();
  }

  function scheduleProcessing(): void {
    if (processScheduled || retryTimer) return;
    processScheduled = true;
    setImmediate(() => {
      processScheduled = false;
      if (processBatch() === BATCH) scheduleProcessing();
    });
  }

  /** Processes up to BATCH pending commands in one transaction; returns how many it took. */
  function processBatch(): number {
    const frames: OutgoingFrame[] = [];
    const done: ProcessedCommand[] = [];
    let seconds: [number, number];
    try {
      seconds = timedTransaction(() => {
        for (const cmd of deps.repo.pendingCommands(0, BATCH)) frames.push(...processOne(cmd, done));
      });
    } catch (err) {
      // The database refused the whole batch (disk full, I/O error): nothing was applied; try again later.
      deps.log.error({ err }, 'processing order commands failed; retrying');
      failing = true;
      retryTimer = setTimeout(() => {
        retryTimer = undefined;
        scheduleProcessing();
      }, RETRY_MS);
      return 0;
    }
    failing = false;
    deps.push(frames);
    if (done.length > 0) deps.observer?.processed(done, ...seconds, deps.now());
    return done.length;
  }

  /** Applies one command in its savepoint; `done` gets its outcome once nothing can roll it back but the batch. */
  function processOne(cmd: CommandRecord, done: ProcessedCommand[]): OutgoingFrame[] {
    const now = deps.now();
    try {
      const frames = deps.repo.savepoint(() => deps.handler.process(cmd, now));
      deps.repo.markProcessed(cmd.seq, 'applied', now);
      done.push({ kind: cmd.kind, outcome: 'applied', confirmedMs: cmd.confirmedMs });
      return frames;
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
      deps.repo.markProcessed(cmd.seq, outcome, now);
      done.push({ kind: cmd.kind, outcome, confirmedMs: cmd.confirmedMs });
      return deps.handler.notify(cmd, codes, now);
    }
  }

  /** Processes everything pending now (at start, after a crash; and at shutdown). */
  function drain(): void {
    if (waiting.length > 0) flushConfirmations();
    while (processBatch() === BATCH);
  }

  return {
    /** Commands confirmed before a crash or power cut are applied before the first new request. */
    start: drain,
    /** Resolves once the command is committed to disk; the caller then writes the confirmation. */
    confirm(record: Omit<CommandRecord, 'seq'>, key?: StoredKey): Promise<void> {
      return new Promise((resolve, reject) => {
        waiting.push({ record, key, resolve, reject });
        if (waiting.length === 1) setImmediate(flushConfirmations);
      });
    },
    drain,
    stop(): void {
      clearTimeout(retryTimer);
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
