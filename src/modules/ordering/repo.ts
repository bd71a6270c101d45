import type { Db } from '../../db/open.js';
import { relaxedTransactions } from '../../db/wal-sync.js';
import { createIdempotencyRepo } from './idempotency-repo.js';

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

export interface OrderRow {
  tenant_id: string;
  id: string;
  order_type: string;
  status: string;
  claim_code: string;
  total_minor: number;
  edit_total_minor: number;
  closed: number;
  completed: number;
  source: string;
  contact_json: string | null;
  extra_json: string | null;
  created_ms: number;
  changed_ms: number;
  /** Submits so far (kitchen rounds). */
  rounds: number;
}

export interface LineRow {
  id: string;
  venue_id: string;
  creator: string;
  product_id: string;
  quantity: number;
  price_minor: number;
  status: string;
  product_json: string;
  created_ms: number;
  updated_ms: number;
  /** The round the line was ordered in; null while NEW. */
  round: number | null;
  /** The kitchen note sent with the line (`extra.note`), or null. */
  note: string | null;
}

export interface NewLine extends Omit<LineRow, 'product_json' | 'round'> {
  productJson: string;
}

/** An order as a snapshot puts it back (src/modules/ordering/restore.ts). */
export interface RestoredOrder {
  tenantId: string; id: string; orderType: string; status: string; claimCode: string; totalMinor: number;
  editTotalMinor: number; closed: number; completed: number; source: string; contactJson: string | null;
  extraJson: string | null; createdMs: number; changedMs: number; rounds: number; version: number;
  buckets: { venueId: string }[];
  lines: {
    id: string; venueId: string; creator: string; productId: string; quantity: number; priceMinor: number; status: string;
    productJson: string; createdMs: number; updatedMs: number; round: number | null; note: string | null;
  }[];
  users: { userId: string; roles: string[] }[];
}

/** Filters of the staff order list; `after` is the keyset cursor (the last row of the previous page). */
export interface OrderFilter {
  venue?: string;
  statuses?: string[];
  changedSinceMs?: number;
  after?: { createdMs: number; id: string };
  limit: number;
}

/** SQL of the ordering module: the command log, orders with their buckets, lines and users. */
export function createOrderRepo(db: Db) {
  const s = {
    insertCommand: db.prepare(
      `INSERT INTO order_commands (correlation_id, tenant_id, user_id, staff, order_id, kind, body_json, confirmed_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    pending: db.prepare<[number, number], {
      seq: number; correlation_id: string; tenant_id: string; user_id: string; staff: number; order_id: string;
      kind: string; body_json: string; confirmed_ms: number;
    }>('SELECT * FROM order_commands WHERE processed_ms IS NULL AND seq > ? ORDER BY seq LIMIT +?'),
    insertProcessed: db.prepare(
      `INSERT INTO order_commands (correlation_id, tenant_id, user_id, staff, order_id, kind, body_json, confirmed_ms,
         processed_ms, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    firstPending: db.prepare<[], { seq: number }>('SELECT seq FROM order_commands WHERE processed_ms IS NULL ORDER BY seq LIMIT 1'),
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
    order: db.prepare<[string, string], OrderRow>('SELECT * FROM orders WHERE tenant_id = ? AND id = ?'),
    insertOrder: db.prepare(
      `INSERT INTO orders (tenant_id, id, order_type, status, claim_code, total_minor, edit_total_minor, closed,
         completed, source, contact_json, extra_json, created_ms, changed_ms)
       VALUES (@tenantId, @id, @orderType, 'NEW', @claimCode, 0, 0, 0, 0, @source, @contactJson, @extraJson, @nowMs, @nowMs)`,
    ),
    touchOrder: db.prepare(
      'UPDATE orders SET edit_total_minor = ?, total_minor = ?, changed_ms = ? WHERE tenant_id = ? AND id = ?',
    ),
    insertBucket: db.prepare(
      `INSERT INTO order_buckets (tenant_id, order_id, venue_id, position, claim_code, open) VALUES (?, ?, ?, ?, ?, 1)`,
    ),
    buckets: db.prepare<[string, string], { venue_id: string }>(
      'SELECT venue_id FROM order_buckets WHERE tenant_id = ? AND order_id = ? ORDER BY position',
    ),
    claimTaken: db.prepare<[string, string, string], { one: number }>(
      'SELECT 1 AS one FROM order_buckets WHERE tenant_id = ? AND venue_id = ? AND claim_code = ? AND open = 1',
    ),
    insertLine: db.prepare(
      `INSERT INTO order_lines (tenant_id, order_id, id, venue_id, position, creator, product_id, quantity,
         price_minor, status, product_json, created_ms, updated_ms, note)
       VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(position) + 1, 0) FROM order_lines WHERE tenant_id = ? AND order_id = ?),
         ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    lines: db.prepare<[string, string], LineRow>(
      `SELECT id, venue_id, creator, product_id, quantity, price_minor, status, product_json, created_ms, updated_ms,
         round, note
       FROM order_lines WHERE tenant_id = ? AND order_id = ? ORDER BY position`,
    ),
    lineQuantity: db.prepare(
      'UPDATE order_lines SET quantity = ?, updated_ms = ? WHERE tenant_id = ? AND order_id = ? AND id = ?',
    ),
    deleteLine: db.prepare('DELETE FROM order_lines WHERE tenant_id = ? AND order_id = ? AND id = ?'),
    orderNewLines: db.prepare(
      `UPDATE order_lines SET status = 'ORDERED', round = ?, updated_ms = ?
       WHERE tenant_id = ? AND order_id = ? AND status = 'NEW'`,
    ),
    cancelLines: db.prepare(
      `UPDATE order_lines SET status = 'CANCELLED', updated_ms = ?
       WHERE tenant_id = ? AND order_id = ? AND status <> 'CANCELLED'`,
    ),
    cancelNewLines: db.prepare(
      `UPDATE order_lines SET status = 'CANCELLED', updated_ms = ?
       WHERE tenant_id = ? AND order_id = ? AND status = 'NEW'`,
    ),
    setStatus: db.prepare('UPDATE orders SET status = ?, rounds = ?, changed_ms = ? WHERE tenant_id = ? AND id = ?'),
    close: db.prepare(
      'UPDATE orders SET status = ?, closed = 1, completed = ?, changed_ms = ? WHERE tenant_id = ? AND id = ?',
    ),
    closeBuckets: db.prepare('UPDATE order_buckets SET open = 0 WHERE tenant_id = ? AND order_id = ?'),
    closeUsers: db.prepare('UPDATE order_users SET open = 0 WHERE tenant_id = ? AND order_id = ?'),
    bumpVersion: db.prepare<[string, string], { version: number }>(
      'UPDATE orders SET version = version + 1 WHERE tenant_id = ? AND id = ? RETURNING version',
    ),
    allOrders: db.prepare<[], { tenant_id: string; id: string }>('SELECT tenant_id, id FROM orders ORDER BY created_ms, id'),
    forget: [
      db.prepare('DELETE FROM order_users WHERE tenant_id = ? AND order_id = ?'),
      db.prepare('DELETE FROM order_lines WHERE tenant_id = ? AND order_id = ?'),
      db.prepare('DELETE FROM order_buckets WHERE tenant_id = ? AND order_id = ?'),
      db.prepare('DELETE FROM orders WHERE tenant_id = ? AND id = ?'),
    ],
    restoreOrder: db.prepare(
      `INSERT INTO orders (tenant_id, id, order_type, status, claim_code, total_minor, edit_total_minor, closed,
         completed, source, contact_json, extra_json, created_ms, changed_ms, rounds, version)
       VALUES (@tenantId, @id, @orderType, @status, @claimCode, @totalMinor, @editTotalMinor, @closed, @completed,
         @source, @contactJson, @extraJson, @createdMs, @changedMs, @rounds, @version)`,
    ),
    restoreBucket: db.prepare(
      'INSERT INTO order_buckets (tenant_id, order_id, venue_id, position, claim_code, open) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    restoreLine: db.prepare(
      `INSERT INTO order_lines (tenant_id, order_id, id, venue_id, position, creator, product_id, quantity,
         price_minor, status, product_json, created_ms, updated_ms, round, note)
       VALUES (@tenantId, @orderId, @id, @venueId, @position, @creator, @productId, @quantity, @priceMinor, @status,
         @productJson, @createdMs, @updatedMs, @round, @note)`,
    ),
    insertUser: db.prepare('INSERT INTO order_users (tenant_id, order_id, user_id, roles, open) VALUES (?, ?, ?, ?, ?)'),
    // Counts up to a limit: whether a user is at its bound needs no more, however many open orders it has. From
    // the index alone (its `open` flag: no lookup of each order). INDEXED BY: left to itself the planner once walked
    // the primary key by tenant alone, every order of the tenant for every `new`. LIMIT +?: with the parameter bare,
    // SQLite would prepare the statement again at every call (docs/operations.md "What a `new` reads").
    openOrdersOf: db.prepare<[string, string, number], { n: number }>(
      `SELECT COUNT(*) AS n FROM (SELECT 1 FROM order_users INDEXED BY order_users_user
       WHERE tenant_id = ? AND user_id = ? AND open = 1 LIMIT +?)`,
    ),
    userHasOrder: db.prepare<[string, string], { one: number }>(
      'SELECT 1 AS one FROM order_users WHERE tenant_id = ? AND user_id = ? LIMIT 1',
    ),
    users: db.prepare<[string, string], { user_id: string; roles: string }>(
      'SELECT user_id, roles FROM order_users WHERE tenant_id = ? AND order_id = ? ORDER BY rowid',
    ),
  };

  // One prepared statement per combination of list filters (at most 16), prepared on first use.
  const listCache = new Map<string, ReturnType<Db['prepare']>>();

  return {
    /** Idempotency-Keys of confirmed commands, written in the transaction that stores the command. */
    idempotency: createIdempotencyRepo(db),
    /** Stores a confirmed command; returns its seq. */
    insertCommand(c: Command): number {
      return Number(s.insertCommand.run(c.correlationId, c.tenantId, c.userId, c.staff ? 1 : 0, c.orderId, c.kind,
        JSON.stringify(c.body), c.confirmedMs).lastInsertRowid);
    },
    /**
     * Stores a command applied in the same transaction, with its outcome: it never enters the pending index (one
     * b-tree page fewer in the WAL per command). A rejected command's body is not kept, as in markProcessed.
     */
    insertProcessed(c: Command, outcome: string, nowMs: number): void {
      s.insertProcessed.run(c.correlationId, c.tenantId, c.userId, c.staff ? 1 : 0, c.orderId, c.kind,
        outcome === 'rejected' ? '{}' : JSON.stringify(c.body), c.confirmedMs, nowMs, outcome);
    },
    /** The seq of the oldest command not yet processed (the partial index order_commands_pending), if any. */
    firstPending: (): number | undefined => s.firstPending.get()?.seq,
    pendingCommands(afterSeq: number, limit: number): CommandRecord[] {
      return s.pending.all(afterSeq, limit).map((r) => ({
        seq: r.seq, correlationId: r.correlation_id, tenantId: r.tenant_id, userId: r.user_id, staff: r.staff === 1,
        orderId: r.order_id, kind: r.kind, body: JSON.parse(r.body_json) as unknown, confirmedMs: r.confirmed_ms,
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
    order: (tenantId: string, id: string): OrderRow | undefined => s.order.get(tenantId, id),
    insertOrder: (o: {
      tenantId: string; id: string; orderType: string; claimCode: string; source: string;
      contactJson: string | null; extraJson: string | null; nowMs: number;
    }) => s.insertOrder.run(o),
    touchOrder: (tenantId: string, id: string, editTotalMinor: number, totalMinor: number, nowMs: number) =>
      s.touchOrder.run(editTotalMinor, totalMinor, nowMs, tenantId, id),
    insertBucket: (tenantId: string, orderId: string, venueId: string, position: number, claimCode: string) =>
      s.insertBucket.run(tenantId, orderId, venueId, position, claimCode),
    bucketVenues: (tenantId: string, orderId: string): string[] =>
      s.buckets.all(tenantId, orderId).map((b) => b.venue_id),
    claimTaken: (tenantId: string, venueId: string, code: string): boolean =>
      s.claimTaken.get(tenantId, venueId, code) !== undefined,
    insertLine(tenantId: string, orderId: string, l: NewLine): void {
      s.insertLine.run(tenantId, orderId, l.id, l.venue_id, tenantId, orderId, l.creator, l.product_id, l.quantity,
        l.price_minor, l.status, l.productJson, l.created_ms, l.updated_ms, l.note);
    },
    lines: (tenantId: string, orderId: string): LineRow[] => s.lines.all(tenantId, orderId),
    /** Lists a user on an open order. */
    insertUser: (tenantId: string, orderId: string, userId: string, roles: string[]) =>
      s.insertUser.run(tenantId, orderId, userId, roles.join(','), 1),
    users: (tenantId: string, orderId: string): { userId: string; roles: string[] }[] =>
      s.users.all(tenantId, orderId).map((u) => ({ userId: u.user_id, roles: u.roles.split(',') })),
    /** Open orders that list the user, counted up to `atMost`. */
    openOrdersOf: (tenantId: string, userId: string, atMost: number): number => s.openOrdersOf.get(tenantId, userId, atMost)!.n,
    /** Whether any order, open or closed, lists the user. */
    userHasOrder: (tenantId: string, userId: string): boolean => s.userHasOrder.get(tenantId, userId) !== undefined,
    setLineQuantity: (tenantId: string, orderId: string, lineId: string, quantity: number, nowMs: number) =>
      s.lineQuantity.run(quantity, nowMs, tenantId, orderId, lineId),
    deleteLine: (tenantId: string, orderId: string, lineId: string) => s.deleteLine.run(tenantId, orderId, lineId),
    /** Every NEW line becomes ORDERED in `round`. */
    orderNewLines: (tenantId: string, orderId: string, round: number, nowMs: number) =>
      s.orderNewLines.run(round, nowMs, tenantId, orderId),
    /** Every line not yet CANCELLED (or, with onlyNew, every NEW line) becomes CANCELLED. */
    cancelLines: (tenantId: string, orderId: string, nowMs: number, onlyNew = false) =>
      (onlyNew ? s.cancelNewLines : s.cancelLines).run(nowMs, tenantId, orderId),
    setStatus: (tenantId: string, orderId: string, status: string, rounds: number, nowMs: number) =>
      s.setStatus.run(status, rounds, nowMs, tenantId, orderId),
    /** Closes the order, frees its claim code at every venue and takes it off its users' open orders. */
    closeOrder(tenantId: string, orderId: string, status: string, completed: boolean, nowMs: number): void {
      s.close.run(status, completed ? 1 : 0, nowMs, tenantId, orderId);
      s.closeBuckets.run(tenantId, orderId);
      s.closeUsers.run(tenantId, orderId);
    },
    /** Counts one more applied command on the order (its version, as the central keeps every version). */
    bumpVersion: (tenantId: string, orderId: string): number => s.bumpVersion.get(tenantId, orderId)!.version,
    /** Every order of every tenant, oldest first (the one-time sync backfill). */
    allOrders: (): { tenantId: string; id: string }[] => s.allOrders.all().map((r) => ({ tenantId: r.tenant_id, id: r.id })),
    /** Replaces an order and its buckets, lines and users by a snapshot (a box restored from an old copy). */
    replaceOrder(o: RestoredOrder): void {
      for (const stmt of s.forget) stmt.run(o.tenantId, o.id);
      s.restoreOrder.run(o);
      o.buckets.forEach((b, i) => s.restoreBucket.run(o.tenantId, o.id, b.venueId, i, o.claimCode, o.closed ? 0 : 1));
      o.lines.forEach((l, i) => s.restoreLine.run({ ...l, tenantId: o.tenantId, orderId: o.id, position: i }));
      for (const u of o.users) s.insertUser.run(o.tenantId, o.id, u.userId, u.roles.join(','), o.closed ? 0 : 1);
    },
    /** Order ids and creation times of a page of the staff list, newest first. */
    listOrders(tenantId: string, f: OrderFilter): { id: string; created_ms: number }[] {
      const where = ['o.tenant_id = @tenantId'];
      if (f.venue !== undefined) {
        where.push(`EXISTS (SELECT 1 FROM order_buckets b
          WHERE b.tenant_id = o.tenant_id AND b.venue_id = @venue AND b.order_id = o.id)`);
      }
      if (f.statuses !== undefined) where.push('o.status IN (SELECT value FROM json_each(@statuses))');
      if (f.changedSinceMs !== undefined) where.push('o.changed_ms >= @since');
      if (f.after !== undefined) {
        where.push('(o.created_ms < @afterMs OR (o.created_ms = @afterMs AND o.id < @afterId))');
      }
      const sql = `SELECT o.id, o.created_ms FROM orders o WHERE ${where.join(' AND ')}
        ORDER BY o.created_ms DESC, o.id DESC LIMIT +@limit`;
      let stmt = listCache.get(sql);
      if (!stmt) listCache.set(sql, (stmt = db.prepare(sql)));
      return stmt.all({
        tenantId, limit: f.limit,
        ...(f.venue !== undefined ? { venue: f.venue } : {}),
        ...(f.statuses !== undefined ? { statuses: JSON.stringify(f.statuses) } : {}),
        ...(f.changedSinceMs !== undefined ? { since: f.changedSinceMs } : {}),
        ...(f.after !== undefined ? { afterMs: f.after.createdMs, afterId: f.after.id } : {}),
      }) as { id: string; created_ms: number }[];
    },
    transaction: <T>(fn: () => T): T => db.transaction(fn).immediate(),
    /** A transaction committed without its own fsync: its effects are told once src/db/wal-sync.ts has synced. */
    relaxedTransaction: relaxedTransactions(db),
    /** A savepoint inside the current transaction: a failed command rolls back alone. */
    savepoint: <T>(fn: () => T): T => db.transaction(fn)(),
  };
}
export type OrderRepo = ReturnType<typeof createOrderRepo>;
