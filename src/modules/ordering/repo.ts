import { type Db, inTransaction } from '../../db/open.js';
import { relaxedTransactions } from '../../db/wal-sync.js';
import { createIdempotencyRepo } from './idempotency-repo.js';
import { createOrderStore } from './order-store.js';

/** A confirmed order command, as the queue applies it. */
export interface Command {
  correlationId: string;
  tenantId: string;
  userId: string;
  staff: boolean;
  orderId: string;
  kind: string;
  body: unknown;
  confirmedMs: number;
}

/** A command as the command log keeps it: its seq orders it. */
export interface CommandRecord extends Command {
  seq: number;
}

export type { LineRow, NewLine, OrderFilter, OrderRow, OrderRows, OrderUser, ReinstatedOrder } from './order-store.js';

/** SQL of the ordering module: the command log, and orders (src/modules/ordering/order-store.ts). */
export function createOrderRepo(db: Db) {
  const tx = inTransaction(db);
  const s = {
    insertCommand: db.prepare(
      `INSERT INTO order_commands (correlation_id, tenant_id, user_id, staff, order_id, kind, body_json, confirmed_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    pending: db.prepare<
      [number, number],
      {
        seq: number;
        correlation_id: string;
        tenant_id: string;
        user_id: string;
        staff: number;
        order_id: string;
        kind: string;
        body_json: string;
        confirmed_ms: number;
      }
    >('SELECT * FROM order_commands WHERE processed_ms IS NULL AND seq > ? ORDER BY seq LIMIT +?'),
    insertProcessed: db.prepare(
      `INSERT INTO order_commands (correlation_id, tenant_id, user_id, staff, order_id, kind, body_json, confirmed_ms,
         processed_ms, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    firstPending: db.prepare<[], { seq: number }>(
      'SELECT seq FROM order_commands WHERE processed_ms IS NULL ORDER BY seq LIMIT 1',
    ),
    pendingCount: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM order_commands WHERE processed_ms IS NULL'),
    // A rejected command changed nothing, so its body (up to 200 lines) is not kept: a client sending refused
    // commands as fast as it can would otherwise grow the file by their bodies until the retention prunes them.
    processed: db.prepare(
      `UPDATE order_commands SET processed_ms = @now, outcome = @outcome,
         body_json = CASE WHEN @outcome = 'rejected' THEN '{}' ELSE body_json END WHERE seq = @seq`,
    ),
    // Retention removes a prefix of the log in seq order: the first row still pending or processed at or after
    // the cutoff stops it, so a pending command is never touched and each run reads only what it removes.
    pruneStop: db.prepare<[number], { seq: number }>(
      'SELECT seq FROM order_commands WHERE processed_ms IS NULL OR processed_ms >= ? ORDER BY seq LIMIT 1',
    ),
    pruneBelow: db.prepare<[number, number]>(
      'DELETE FROM order_commands WHERE seq IN (SELECT seq FROM order_commands WHERE seq < ? ORDER BY seq LIMIT +?)',
    ),
  };

  const store = createOrderStore(db);

  return {
    /** Idempotency-Keys of confirmed commands, written in the transaction that stores the command. */
    idempotency: createIdempotencyRepo(db),
    /** Stores a confirmed command; returns its seq. */
    insertCommand(c: Command): number {
      return Number(
        s.insertCommand.run(
          c.correlationId,
          c.tenantId,
          c.userId,
          c.staff ? 1 : 0,
          c.orderId,
          c.kind,
          JSON.stringify(c.body),
          c.confirmedMs,
        ).lastInsertRowid,
      );
    },
    /**
     * Stores a command applied in the same transaction, with its outcome: it never enters the pending index (one
     * b-tree page fewer in the WAL per command). A rejected command's body is not kept, as in markProcessed.
     */
    insertProcessed(c: Command, outcome: string, nowMs: number): void {
      s.insertProcessed.run(
        c.correlationId,
        c.tenantId,
        c.userId,
        c.staff ? 1 : 0,
        c.orderId,
        c.kind,
        outcome === 'rejected' ? '{}' : JSON.stringify(c.body),
        c.confirmedMs,
        nowMs,
        outcome,
      );
    },
    /** The seq of the oldest command not yet processed (the partial index order_commands_pending), if any. */
    firstPending: (): number | undefined => s.firstPending.get()?.seq,
    pendingCommands(afterSeq: number, limit: number): CommandRecord[] {
      return s.pending.all(afterSeq, limit).map((r) => ({
        seq: r.seq,
        correlationId: r.correlation_id,
        tenantId: r.tenant_id,
        userId: r.user_id,
        staff: r.staff === 1,
        orderId: r.order_id,
        kind: r.kind,
        body: JSON.parse(r.body_json) as unknown,
        confirmedMs: r.confirmed_ms,
      }));
    },
    /** Commands confirmed and not yet processed (the partial index order_commands_pending counts them). */
    pendingCount: (): number => s.pendingCount.get()!.n,
    markProcessed: (seq: number, outcome: string, nowMs: number) => s.processed.run({ now: nowMs, outcome, seq }),
    /**
     * Removes up to `limit` commands processed before `beforeMs` (oldest first); returns how many. Nothing reads a
     * processed command again: orders hold their state, Idempotency-Keys their own confirmation.
     */
    pruneProcessedCommands(beforeMs: number, limit: number): number {
      const stop = s.pruneStop.get(beforeMs)?.seq ?? Number.MAX_SAFE_INTEGER;
      return s.pruneBelow.run(stop, limit).changes;
    },
    ...store,
    transaction: <T>(fn: () => T): T => tx.immediate(fn),
    /** A transaction committed without its own fsync: its effects are told once src/db/wal-sync.ts has synced. */
    relaxedTransaction: relaxedTransactions(db),
    /**
     * A savepoint inside the current transaction, run as the orders' unit of work (src/modules/ordering/order-store.ts):
     * a failed command rolls back alone.
     */
    savepoint: <T>(fn: () => T): T => store.unit(fn),
  };
}
export type OrderRepo = ReturnType<typeof createOrderRepo>;
