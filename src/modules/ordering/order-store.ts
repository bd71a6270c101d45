import { type Db, inTransaction } from '../../db/open.js';

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
  /** Applied commands so far (the central keeps every version). */
  version: number;
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

export interface OrderUser {
  userId: string;
  roles: string[];
}

/** An order as stored: its row and, in position order, its buckets' venues, its lines and its users. */
export interface OrderRows {
  row: OrderRow;
  lines: LineRow[];
  venueIds: string[];
  users: OrderUser[];
}

/** An order as a snapshot puts it back (src/modules/ordering/reinstate.ts). */
export interface ReinstatedOrder {
  tenantId: string;
  id: string;
  orderType: string;
  status: string;
  claimCode: string;
  totalMinor: number;
  editTotalMinor: number;
  closed: number;
  completed: number;
  source: string;
  contactJson: string | null;
  extraJson: string | null;
  createdMs: number;
  changedMs: number;
  rounds: number;
  version: number;
  buckets: { venueId: string }[];
  lines: {
    id: string;
    venueId: string;
    creator: string;
    productId: string;
    quantity: number;
    priceMinor: number;
    status: string;
    productJson: string;
    createdMs: number;
    updatedMs: number;
    round: number | null;
    note: string | null;
  }[];
  users: OrderUser[];
}

/** Filters of the staff order list; `after` is the keyset cursor (the last row of the previous page). */
export interface OrderFilter {
  venue?: string;
  statuses?: string[];
  changedSinceMs?: number;
  after?: { createdMs: number; id: string };
  limit: number;
}

interface StoredRow extends OrderRow {
  venues_json: string;
  lines_json: string;
  users_json: string;
}

/** An order read or written in the current unit of work. */
interface LoadedOrder extends OrderRows {
  /** Whether its row exists in the database (else the unit's end inserts it). */
  stored: boolean;
  /** `closed` as the database holds it: the index of open orders' claim codes is only written when it changes. */
  storedClosed: number;
  /** Replaced whole (a snapshot): every column is written, indexed ones too. */
  replaced: boolean;
  dirty: boolean;
}

/** What commands change. */
const CHANGING = [
  'status',
  'total_minor',
  'edit_total_minor',
  'completed',
  'changed_ms',
  'rounds',
  'version',
  'venues_json',
  'lines_json',
  'users_json',
];
/** Every column but the key. */
const ALL = ['order_type', 'claim_code', 'closed', 'source', 'contact_json', 'extra_json', 'created_ms', ...CHANGING];
const KEYED = ['tenant_id', 'id', ...ALL];
const COLUMNS = KEYED.join(', ');
const updateOf = (columns: string[]) =>
  `UPDATE orders SET ${columns.map((c) => `${c} = @${c}`).join(', ')} WHERE tenant_id = @tenant_id AND id = @id`;

/**
 * Orders, each one row (docs/performance.md "What a `new` writes"): its venues, lines and users are JSON columns,
 * read and written whole. A command runs as a unit of work (`unit`, the command's savepoint): it reads each order
 * it touches once, changes it in memory, and the unit's end writes each changed order once; an order changed
 * outside a unit is written at once. What is read across orders has its index: the claim codes of open orders
 * (orders_open_claim) and the orders of a user (user_orders, written as they change, not at the unit's end).
 * Rows that reference an order (print jobs) are only written for orders a previous command stored.
 */
export function createOrderStore(db: Db) {
  const s = {
    get: db.prepare<[string, string], StoredRow>(`SELECT ${COLUMNS} FROM orders WHERE tenant_id = ? AND id = ?`),
    insert: db.prepare(`INSERT INTO orders (${COLUMNS}) VALUES (${KEYED.map((c) => `@${c}`).join(', ')})`),
    // SQLite rewrites an index entry whenever an UPDATE sets one of its columns, changed or not: a command sets
    // neither created_ms (orders_newest) nor claim_code, and closed (orders_open_claim) only when the order closes.
    update: db.prepare(updateOf(CHANGING)),
    updateClosed: db.prepare(updateOf(['closed', ...CHANGING])),
    // A snapshot: every column.
    replace: db.prepare(updateOf(ALL)),
    claimTaken: db.prepare<[string, string, string], { one: number }>(
      `SELECT 1 AS one FROM orders o INDEXED BY orders_open_claim, json_each(o.venues_json) v
       WHERE o.tenant_id = ? AND o.claim_code = ? AND o.closed = 0 AND v.value = ? LIMIT 1`,
    ),
    listUser: db.prepare('INSERT OR IGNORE INTO user_orders (tenant_id, user_id, open, order_id) VALUES (?, ?, ?, ?)'),
    unlistUser: db.prepare('DELETE FROM user_orders WHERE tenant_id = ? AND user_id = ? AND order_id = ?'),
    closeUser: db.prepare(
      'UPDATE user_orders SET open = 0 WHERE tenant_id = ? AND user_id = ? AND open = 1 AND order_id = ?',
    ),
    // Counts up to a limit: whether a user is at its bound needs no more, however many open orders it has. LIMIT +?:
    // with the parameter bare, SQLite would prepare the statement again at every call (docs/operations.md "What a
    // `new` reads").
    openOrdersOf: db.prepare<[string, string, number], { n: number }>(
      `SELECT COUNT(*) AS n FROM (SELECT 1 FROM user_orders WHERE tenant_id = ? AND user_id = ? AND open = 1 LIMIT +?)`,
    ),
    userHasOrder: db.prepare<[string, string], { one: number }>(
      'SELECT 1 AS one FROM user_orders WHERE tenant_id = ? AND user_id = ? LIMIT 1',
    ),
    allOrders: db.prepare<[], { tenant_id: string; id: string }>(
      'SELECT tenant_id, id FROM orders ORDER BY created_ms, id',
    ),
  };

  // One prepared statement per combination of list filters (at most 16), prepared on first use.
  const listCache = new Map<string, ReturnType<Db['prepare']>>();

  /** The orders of the unit of work running now, by tenant and id; undefined outside one. */
  let work: Map<string, LoadedOrder> | undefined;
  const keyOf = (tenantId: string, id: string) => `${tenantId} ${id}`;

  function read(tenantId: string, id: string): LoadedOrder | undefined {
    const r = s.get.get(tenantId, id);
    if (!r) return undefined;
    const { venues_json, lines_json, users_json, ...row } = r;
    return {
      row,
      lines: JSON.parse(lines_json) as LineRow[],
      venueIds: JSON.parse(venues_json) as string[],
      users: JSON.parse(users_json) as OrderUser[],
      stored: true,
      storedClosed: row.closed,
      replaced: false,
      dirty: false,
    };
  }

  function loaded(tenantId: string, id: string): LoadedOrder | undefined {
    if (!work) return read(tenantId, id);
    const key = keyOf(tenantId, id);
    const d = work.get(key) ?? read(tenantId, id);
    if (d) work.set(key, d);
    return d;
  }

  function write(d: LoadedOrder): void {
    const stmt = !d.stored
      ? s.insert
      : d.replaced
        ? s.replace
        : d.row.closed !== d.storedClosed
          ? s.updateClosed
          : s.update;
    stmt.run({
      ...d.row,
      venues_json: JSON.stringify(d.venueIds),
      lines_json: JSON.stringify(d.lines),
      users_json: JSON.stringify(d.users),
    });
    d.stored = true;
    d.storedClosed = d.row.closed;
    d.replaced = false;
    d.dirty = false;
  }

  function put(d: LoadedOrder): void {
    if (work) {
      d.dirty = true;
      work.set(keyOf(d.row.tenant_id, d.row.id), d);
    } else {
      write(d);
    }
  }

  /**
   * Changes an order (nothing when there is none). Each change replaces what it changes (row, lines), never edits
   * it: rows and lines handed out earlier in the unit keep what they said.
   */
  function change(tenantId: string, id: string, fn: (d: LoadedOrder) => void): void {
    const d = loaded(tenantId, id);
    if (!d) return;
    fn(d);
    put(d);
  }

  const transaction = inTransaction(db);
  const flush = (w: Map<string, LoadedOrder>) => {
    for (const d of w.values()) if (d.dirty) write(d);
  };

  return {
    /**
     * Runs `fn` as a unit of work in a savepoint: the orders it changed are written at its end, inside the
     * savepoint, and a throw forgets them with the savepoint's rollback. A unit inside another first writes the
     * outer one's orders, which reads them again afterwards.
     */
    unit<T>(fn: () => T): T {
      const outer = work;
      if (outer) {
        flush(outer);
        outer.clear();
      }
      try {
        return transaction(() => {
          const mine = new Map<string, LoadedOrder>();
          work = mine;
          const result = fn();
          flush(mine);
          return result;
        });
      } finally {
        work = outer;
      }
    },
    rows(tenantId: string, id: string): OrderRows | undefined {
      const d = loaded(tenantId, id);
      return d && { row: d.row, lines: d.lines, venueIds: d.venueIds, users: d.users };
    },
    order: (tenantId: string, id: string): OrderRow | undefined => loaded(tenantId, id)?.row,
    lines: (tenantId: string, id: string): LineRow[] => loaded(tenantId, id)?.lines ?? [],
    bucketVenues: (tenantId: string, id: string): string[] => loaded(tenantId, id)?.venueIds ?? [],
    users: (tenantId: string, id: string): OrderUser[] => loaded(tenantId, id)?.users ?? [],
    insertOrder(o: {
      tenantId: string;
      id: string;
      orderType: string;
      claimCode: string;
      source: string;
      contactJson: string | null;
      extraJson: string | null;
      nowMs: number;
    }): void {
      put({
        row: {
          tenant_id: o.tenantId,
          id: o.id,
          order_type: o.orderType,
          status: 'NEW',
          claim_code: o.claimCode,
          total_minor: 0,
          edit_total_minor: 0,
          closed: 0,
          completed: 0,
          source: o.source,
          contact_json: o.contactJson,
          extra_json: o.extraJson,
          created_ms: o.nowMs,
          changed_ms: o.nowMs,
          rounds: 0,
          version: 0,
        },
        lines: [],
        venueIds: [],
        users: [],
        stored: false,
        storedClosed: 0,
        replaced: false,
        dirty: true,
      });
    },
    touchOrder: (tenantId: string, id: string, editTotalMinor: number, totalMinor: number, nowMs: number) =>
      change(tenantId, id, (d) => {
        d.row = { ...d.row, edit_total_minor: editTotalMinor, total_minor: totalMinor, changed_ms: nowMs };
      }),
    /** Adds a bucket: the venue joins the order, after the venues it has. */
    insertBucket: (tenantId: string, id: string, venueId: string) =>
      change(tenantId, id, (d) => {
        d.venueIds = [...d.venueIds, venueId];
      }),
    /** Whether an open order at the venue holds the claim code. */
    claimTaken: (tenantId: string, venueId: string, code: string): boolean =>
      s.claimTaken.get(tenantId, code, venueId) !== undefined,
    /** Adds a line after the order's lines. */
    insertLine(tenantId: string, id: string, l: NewLine): void {
      const { productJson, ...line } = l;
      change(tenantId, id, (d) => {
        d.lines = [...d.lines, { ...line, product_json: productJson, round: null }];
      });
    },
    /** Lists a user on an order. */
    insertUser(tenantId: string, id: string, userId: string, roles: string[]): void {
      change(tenantId, id, (d) => {
        d.users = [...d.users, { userId, roles }];
        s.listUser.run(tenantId, userId, d.row.closed ? 0 : 1, id);
      });
    },
    /** Open orders that list the user, counted up to `atMost`. */
    openOrdersOf: (tenantId: string, userId: string, atMost: number): number =>
      s.openOrdersOf.get(tenantId, userId, atMost)!.n,
    /** Whether any order, open or closed, lists the user. */
    userHasOrder: (tenantId: string, userId: string): boolean => s.userHasOrder.get(tenantId, userId) !== undefined,
    setLineQuantity: (tenantId: string, id: string, lineId: string, quantity: number, nowMs: number) =>
      change(tenantId, id, (d) => {
        d.lines = d.lines.map((l) => (l.id === lineId ? { ...l, quantity, updated_ms: nowMs } : l));
      }),
    deleteLine: (tenantId: string, id: string, lineId: string) =>
      change(tenantId, id, (d) => {
        d.lines = d.lines.filter((l) => l.id !== lineId);
      }),
    /** Every NEW line becomes ORDERED in `round`. */
    orderNewLines: (tenantId: string, id: string, round: number, nowMs: number) =>
      change(tenantId, id, (d) => {
        d.lines = d.lines.map((l) => (l.status === 'NEW' ? { ...l, status: 'ORDERED', round, updated_ms: nowMs } : l));
      }),
    /** Every line not yet CANCELLED (or, with onlyNew, every NEW line) becomes CANCELLED. */
    cancelLines: (tenantId: string, id: string, nowMs: number, onlyNew = false) =>
      change(tenantId, id, (d) => {
        d.lines = d.lines.map((l) =>
          l.status === 'CANCELLED' || (onlyNew && l.status !== 'NEW')
            ? l
            : { ...l, status: 'CANCELLED', updated_ms: nowMs },
        );
      }),
    setStatus: (tenantId: string, id: string, status: string, rounds: number, nowMs: number) =>
      change(tenantId, id, (d) => {
        d.row = { ...d.row, status, rounds, changed_ms: nowMs };
      }),
    /** Closes the order: its claim code is free again at every venue, and it leaves its users' open orders. */
    closeOrder(tenantId: string, id: string, status: string, completed: boolean, nowMs: number): void {
      change(tenantId, id, (d) => {
        d.row = { ...d.row, status, closed: 1, completed: completed ? 1 : 0, changed_ms: nowMs };
        for (const u of d.users) s.closeUser.run(tenantId, u.userId, id);
      });
    },
    /** Counts one more applied command on the order; returns its new version. */
    bumpVersion(tenantId: string, id: string): number {
      let version = 0;
      change(tenantId, id, (d) => {
        version = d.row.version + 1;
        d.row = { ...d.row, version };
      });
      return version;
    },
    /** Every order of every tenant, oldest first (the one-time sync backfill). */
    allOrders: (): { tenantId: string; id: string }[] =>
      s.allOrders.all().map((r) => ({ tenantId: r.tenant_id, id: r.id })),
    /** Replaces an order (or adds it) as a snapshot says (a box restored from an old copy). */
    replaceOrder(o: ReinstatedOrder): void {
      const before = loaded(o.tenantId, o.id);
      for (const u of before?.users ?? []) s.unlistUser.run(o.tenantId, u.userId, o.id);
      put({
        row: {
          tenant_id: o.tenantId,
          id: o.id,
          order_type: o.orderType,
          status: o.status,
          claim_code: o.claimCode,
          total_minor: o.totalMinor,
          edit_total_minor: o.editTotalMinor,
          closed: o.closed,
          completed: o.completed,
          source: o.source,
          contact_json: o.contactJson,
          extra_json: o.extraJson,
          created_ms: o.createdMs,
          changed_ms: o.changedMs,
          rounds: o.rounds,
          version: o.version,
        },
        venueIds: o.buckets.map((b) => b.venueId),
        lines: o.lines.map((l) => ({
          id: l.id,
          venue_id: l.venueId,
          creator: l.creator,
          product_id: l.productId,
          quantity: l.quantity,
          price_minor: l.priceMinor,
          status: l.status,
          product_json: l.productJson,
          created_ms: l.createdMs,
          updated_ms: l.updatedMs,
          round: l.round,
          note: l.note,
        })),
        users: o.users.map((u) => ({ userId: u.userId, roles: u.roles })),
        stored: before?.stored ?? false,
        storedClosed: before?.storedClosed ?? 0,
        replaced: true,
        dirty: true,
      });
      for (const u of o.users) s.listUser.run(o.tenantId, u.userId, o.closed ? 0 : 1, o.id);
    },
    /** Order ids and creation times of a page of the staff list, newest first. */
    listOrders(tenantId: string, f: OrderFilter): { id: string; created_ms: number }[] {
      const where = ['o.tenant_id = @tenantId'];
      if (f.venue !== undefined) where.push('EXISTS (SELECT 1 FROM json_each(o.venues_json) v WHERE v.value = @venue)');
      if (f.statuses !== undefined) where.push('o.status IN (SELECT value FROM json_each(@statuses))');
      if (f.changedSinceMs !== undefined) where.push('o.changed_ms >= @since');
      if (f.after !== undefined) {
        where.push('(o.created_ms < @afterMs OR (o.created_ms = @afterMs AND o.id < @afterId))');
      }
      const sql = `SELECT o.id, o.created_ms FROM orders o WHERE ${where.join(' AND ')}
        ORDER BY o.created_ms DESC, o.id DESC LIMIT +@limit`;
      let stmt = listCache.get(sql);
      if (!stmt) {
        stmt = db.prepare(sql);
        listCache.set(sql, stmt);
      }
      return stmt.all({
        tenantId,
        limit: f.limit,
        ...(f.venue !== undefined ? { venue: f.venue } : {}),
        ...(f.statuses !== undefined ? { statuses: JSON.stringify(f.statuses) } : {}),
        ...(f.changedSinceMs !== undefined ? { since: f.changedSinceMs } : {}),
        ...(f.after !== undefined ? { afterMs: f.after.createdMs, afterId: f.after.id } : {}),
      }) as { id: string; created_ms: number }[];
    },
  };
}
export type OrderStore = ReturnType<typeof createOrderStore>;
