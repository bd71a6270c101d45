// A reference server for the order benchmark: the box's order path (an anonymous token, `order/new`, the socket's
// ORDER_CHANGE) built the conventional way, Fastify + ws + better-sqlite3, doing the same SQLite work as the box (the
// same tables, columns, indexes and statements for a `new`), so a benchmark can tell what the box's own stack buys on
// the same machine. Not the box: one tenant and venue, customers only, no contact, notes, replay or retention.
// node scripts/lib/bench-peer.mjs --port 0 --host 127.0.0.1 --data-dir DIR  -> {"msg":"peer listening","port":n}
import { createHash, randomBytes, randomInt, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { WebSocketServer } from 'ws';

const { values: opts } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    'data-dir': { type: 'string' },
  },
});
if (!opts['data-dir']) throw new Error('--data-dir is required');
const demo = JSON.parse(readFileSync(new URL('../../native-config/demo.json', import.meta.url), 'utf8')).tenants[0];
const TENANT = demo.id;
const TOKEN_TTL_S = 3600;
const BATCH = 256; // the box's queue applies at most this many commands per transaction
const MAX_OPEN = 20; // the box's default ordering.maxOpenPerAnonymousUser

// Conventional settings: WAL, an fsync at every commit, SQLite's automatic checkpoint left on (the box turns it off
// and checkpoints on a worker thread of its own).
const db = new Database(join(opts['data-dir'], 'peer.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');

// The box's tables for a `new` as its migrations 0001-0008 leave them (columns added by ALTER last, as there), less the
// foreign keys to tables not made here. users and access_tokens are the peer's own: the box signs its access tokens.
db.exec(`
CREATE TABLE IF NOT EXISTS venues (tenant_id TEXT NOT NULL, id TEXT NOT NULL, menu_id TEXT NOT NULL, warehouse_id TEXT,
  lat REAL NOT NULL, lng REAL NOT NULL, venue_json TEXT NOT NULL, cat_rev INTEGER, PRIMARY KEY (tenant_id, id)) STRICT;
CREATE TABLE IF NOT EXISTS products (tenant_id TEXT NOT NULL, menu_id TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL,
  price_minor INTEGER NOT NULL, channels TEXT, snapshot_json TEXT NOT NULL, PRIMARY KEY (tenant_id, menu_id, id)) STRICT;
CREATE TABLE IF NOT EXISTS product_locks (tenant_id TEXT NOT NULL, venue_id TEXT NOT NULL, product_id TEXT NOT NULL,
  reason TEXT NOT NULL, since_ms INTEGER NOT NULL, PRIMARY KEY (tenant_id, venue_id, product_id)) STRICT;
CREATE TABLE IF NOT EXISTS hq_sold_out (tenant_id TEXT NOT NULL, venue_id TEXT NOT NULL, product_id TEXT NOT NULL,
  reason TEXT NOT NULL, since_ms INTEGER NOT NULL, cat_rev INTEGER NOT NULL, PRIMARY KEY (tenant_id, venue_id, product_id)) STRICT;
CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, created_ms INTEGER NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS access_tokens (token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id),
  expires_ms INTEGER NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS order_commands (seq INTEGER PRIMARY KEY, correlation_id TEXT NOT NULL UNIQUE, tenant_id TEXT NOT NULL,
  user_id TEXT NOT NULL, staff INTEGER NOT NULL, order_id TEXT NOT NULL, kind TEXT NOT NULL, body_json TEXT NOT NULL,
  confirmed_ms INTEGER NOT NULL, processed_ms INTEGER, outcome TEXT) STRICT;
CREATE INDEX IF NOT EXISTS order_commands_pending ON order_commands (seq) WHERE processed_ms IS NULL;
CREATE TABLE IF NOT EXISTS orders (tenant_id TEXT NOT NULL, id TEXT NOT NULL, order_type TEXT NOT NULL, status TEXT NOT NULL,
  claim_code TEXT NOT NULL, total_minor INTEGER NOT NULL, edit_total_minor INTEGER NOT NULL, closed INTEGER NOT NULL,
  completed INTEGER NOT NULL, source TEXT NOT NULL, contact_json TEXT, extra_json TEXT, created_ms INTEGER NOT NULL,
  changed_ms INTEGER NOT NULL, rounds INTEGER NOT NULL DEFAULT 0, version INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, id)) STRICT;
CREATE INDEX IF NOT EXISTS orders_newest ON orders (tenant_id, created_ms DESC, id DESC);
CREATE TABLE IF NOT EXISTS order_buckets (tenant_id TEXT NOT NULL, order_id TEXT NOT NULL, venue_id TEXT NOT NULL,
  position INTEGER NOT NULL, claim_code TEXT NOT NULL, open INTEGER NOT NULL, PRIMARY KEY (tenant_id, order_id, venue_id),
  FOREIGN KEY (tenant_id, order_id) REFERENCES orders(tenant_id, id)) STRICT;
CREATE UNIQUE INDEX IF NOT EXISTS order_buckets_claim ON order_buckets (tenant_id, venue_id, claim_code) WHERE open = 1;
CREATE INDEX IF NOT EXISTS order_buckets_venue ON order_buckets (tenant_id, venue_id, order_id);
CREATE TABLE IF NOT EXISTS order_lines (tenant_id TEXT NOT NULL, order_id TEXT NOT NULL, id TEXT NOT NULL, venue_id TEXT NOT NULL,
  position INTEGER NOT NULL, creator TEXT NOT NULL, product_id TEXT NOT NULL, quantity INTEGER NOT NULL, price_minor INTEGER NOT NULL,
  status TEXT NOT NULL, product_json TEXT NOT NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL, round INTEGER,
  note TEXT, PRIMARY KEY (tenant_id, order_id, id), FOREIGN KEY (tenant_id, order_id) REFERENCES orders(tenant_id, id)) STRICT;
CREATE TABLE IF NOT EXISTS order_users (tenant_id TEXT NOT NULL, order_id TEXT NOT NULL, user_id TEXT NOT NULL, roles TEXT NOT NULL,
  open INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (tenant_id, order_id, user_id), FOREIGN KEY (tenant_id, order_id) REFERENCES orders(tenant_id, id)) STRICT;
CREATE INDEX IF NOT EXISTS order_users_user ON order_users (tenant_id, user_id, open);
CREATE TABLE IF NOT EXISTS user_streams (tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, last_seq INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, user_id)) STRICT;
CREATE TABLE IF NOT EXISTS user_events (tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL,
  payload_json TEXT NOT NULL, created_ms INTEGER NOT NULL, PRIMARY KEY (tenant_id, user_id, seq)) STRICT;
CREATE INDEX IF NOT EXISTS user_events_age ON user_events (created_ms);
CREATE TABLE IF NOT EXISTS sync_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL UNIQUE, tenant_id TEXT NOT NULL,
  kind TEXT NOT NULL, aggregate_id TEXT NOT NULL, envelope TEXT NOT NULL, chain_hash TEXT NOT NULL, created_ms INTEGER NOT NULL) STRICT;
`);

// The demo tenant's first venue and its menu's products, priced and snapshotted as the box's provisioning does.
const venue = demo.venues[0];
const productsOf = (node) => (node.kind === 'svc/product' ? [node] : node.items.flatMap(productsOf));
db.transaction(() => {
  db.prepare(
    'INSERT OR REPLACE INTO venues (tenant_id, id, menu_id, lat, lng, venue_json) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(TENANT, venue.id, venue.menu, venue.geoPosition.lat, venue.geoPosition.lng, JSON.stringify(venue));
  const insert = db.prepare('INSERT OR REPLACE INTO products VALUES (?, ?, ?, ?, ?, ?, ?)');
  for (const p of productsOf(demo.menus.find((m) => m.id === venue.menu).root)) {
    const name = p.details.literals.name ?? p.id;
    const img = p.details.media.find((m) => m.name === 'MAIN_IMG')?.url ?? '';
    const snapshot = {
      kind: 'product',
      id: p.id,
      literals: { name },
      img,
      quantity: '1',
      price: p.price,
      extra: { ...p._ },
    };
    const priceMinor = Math.round(Number(p.price) * 100);
    insert.run(TENANT, venue.menu, p.id, name, priceMinor, p.channels?.join(',') ?? null, JSON.stringify(snapshot));
  }
})();

// The box's statements (src/modules/ordering/repo.ts, events/event-store.ts, sync/repo.ts, venues/, menus/).
const s = Object.fromEntries(
  Object.entries({
    insertUser: 'INSERT INTO users (id, tenant_id, created_ms) VALUES (?, ?, ?)',
    insertToken: 'INSERT INTO access_tokens (token_hash, user_id, expires_ms) VALUES (?, ?, ?)',
    token: 'SELECT user_id, expires_ms FROM access_tokens WHERE token_hash = ?',
    insertCommand: `INSERT INTO order_commands (correlation_id, tenant_id, user_id, staff, order_id, kind, body_json, confirmed_ms)
    VALUES (?, ?, ?, 0, ?, 'new', ?, ?)`,
    pending: 'SELECT * FROM order_commands WHERE processed_ms IS NULL AND seq > ? ORDER BY seq LIMIT ?',
    processed: `UPDATE order_commands SET processed_ms = @now, outcome = @outcome,
    body_json = CASE WHEN @outcome = 'rejected' THEN '{}' ELSE body_json END WHERE seq = @seq`,
    venue: 'SELECT venue_json FROM venues WHERE tenant_id = ? AND id = ?',
    product:
      'SELECT id, name, price_minor, channels, snapshot_json FROM products WHERE tenant_id = ? AND menu_id = ? AND id = ?',
    lock: 'SELECT 1 FROM product_locks WHERE tenant_id = ? AND venue_id = ? AND product_id = ?',
    hqLock: 'SELECT 1 FROM hq_sold_out WHERE tenant_id = ? AND venue_id = ? AND product_id = ?',
    openOrdersOf: 'SELECT COUNT(*) AS n FROM order_users WHERE tenant_id = ? AND user_id = ? AND open = 1',
    claimTaken:
      'SELECT 1 AS one FROM order_buckets WHERE tenant_id = ? AND venue_id = ? AND claim_code = ? AND open = 1',
    insertOrder: `INSERT INTO orders (tenant_id, id, order_type, status, claim_code, total_minor, edit_total_minor, closed, completed,
    source, contact_json, extra_json, created_ms, changed_ms) VALUES (?, ?, ?, 'NEW', ?, 0, 0, 0, 0, 'venue-box', NULL, NULL, ?, ?)`,
    insertBucket:
      'INSERT INTO order_buckets (tenant_id, order_id, venue_id, position, claim_code, open) VALUES (?, ?, ?, ?, ?, 1)',
    insertOrderUser: 'INSERT INTO order_users (tenant_id, order_id, user_id, roles) VALUES (?, ?, ?, ?)',
    insertLine: `INSERT INTO order_lines (tenant_id, order_id, id, venue_id, position, creator, product_id, quantity, price_minor,
    status, product_json, created_ms, updated_ms, note) VALUES (?, ?, ?, ?,
    (SELECT COALESCE(MAX(position) + 1, 0) FROM order_lines WHERE tenant_id = ? AND order_id = ?), ?, ?, ?, ?, 'NEW', ?, ?, ?, NULL)`,
    touchOrder:
      'UPDATE orders SET edit_total_minor = ?, total_minor = ?, changed_ms = ? WHERE tenant_id = ? AND id = ?',
    order: 'SELECT * FROM orders WHERE tenant_id = ? AND id = ?',
    lines: `SELECT id, venue_id, creator, product_id, quantity, price_minor, status, product_json, created_ms, updated_ms, round, note
    FROM order_lines WHERE tenant_id = ? AND order_id = ? ORDER BY position`,
    buckets: 'SELECT venue_id FROM order_buckets WHERE tenant_id = ? AND order_id = ? ORDER BY position',
    users: 'SELECT user_id, roles FROM order_users WHERE tenant_id = ? AND order_id = ? ORDER BY rowid',
    bumpVersion: 'UPDATE orders SET version = version + 1 WHERE tenant_id = ? AND id = ? RETURNING version',
    lineRounds: 'SELECT id, round FROM order_lines WHERE tenant_id = ? AND order_id = ? ORDER BY position',
    outboxLast: 'SELECT seq, chain_hash FROM sync_outbox ORDER BY seq DESC LIMIT 1',
    outboxInsert: `INSERT INTO sync_outbox (seq, event_id, tenant_id, kind, aggregate_id, envelope, chain_hash, created_ms)
    VALUES (NULL, ?, ?, 'order.changed', ?, ?, ?, ?)`,
    bumpStream: `INSERT INTO user_streams (tenant_id, user_id, last_seq) VALUES (?, ?, 1)
    ON CONFLICT (tenant_id, user_id) DO UPDATE SET last_seq = last_seq + 1 RETURNING last_seq`,
    insertEvent:
      'INSERT INTO user_events (tenant_id, user_id, seq, type, payload_json, created_ms) VALUES (?, ?, ?, ?, ?, ?)',
    position: 'SELECT last_seq FROM user_streams WHERE tenant_id = ? AND user_id = ?',
  }).map(([name, sql]) => [name, db.prepare(sql)]),
);

const iso = (ms) => new Date(ms).toISOString();
const money = (m) => `${Math.trunc(m / 100)}.${String(m % 100).padStart(2, '0')}`; // no negative amounts here
const sha256 = (text) => createHash('sha256').update(text).digest('hex');
const channelOf = (type) => (type === 'DELIVERY' || type === 'TAKE_AWAY' ? type : 'DINE_IN');
const frame = (type, seq, payloadJson) => `{"type":"${type}","seq":${seq},"payload":${payloadJson}}`;
const getVenue = (id) => {
  const r = s.venue.get(TENANT, id);
  return r && JSON.parse(r.venue_json);
};
const problem = (code, message, args) => ({ code, message, args });

/** A UUIDv7 like the box's outbox event ids (src/shared/ids.ts newId7): its unique index grows at the end. */
function uuid7(ms) {
  const b = randomBytes(16);
  b.writeUIntBE(ms, 0, 6);
  b[6] = (b[6] & 0x0f) | 0x70;
  b[8] = (b[8] & 0x3f) | 0x80;
  return b.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
}

/** A business rule refused the command: it is marked rejected and its user gets a NOTIFICATION. */
class Rejected extends Error {
  constructor(...codes) {
    super(codes.map((c) => c.message).join('; '));
    this.codes = codes;
  }
}

/** The bearer's user, or undefined (unknown or expired token): one indexed lookup per request and upgrade. */
function principalOf(authorization) {
  const m = /^Bearer (\S+)$/i.exec(authorization ?? '');
  const row = m && s.token.get(sha256(m[1]));
  return row && row.expires_ms > Date.now() ? { userId: row.user_id, expMs: row.expires_ms } : undefined;
}

/** The Order (src/shared/order-schemas.ts) read back from its rows, as the box's buildOrder (order-view.ts) does. */
function buildOrder(orderId) {
  const row = s.order.get(TENANT, orderId);
  const lines = s.lines.all(TENANT, orderId);
  const buckets = s.buckets.all(TENANT, orderId).map(({ venue_id: venueId }) => {
    const v = getVenue(venueId);
    const c = v?.channelConstraints[channelOf(row.order_type)];
    const [h = '0', m = '0'] = (c?.minDeliveryTime ?? '00:00:00').split(':');
    return {
      venue: venueId,
      name: v?.name ?? '',
      menu: v?.menu ?? '',
      lines: lines
        .filter((l) => l.venue_id === venueId)
        .map((l) => ({
          id: l.id,
          creator: l.creator,
          created: iso(l.created_ms),
          updated: iso(l.updated_ms),
          source: row.source,
          quantity: l.quantity,
          price: money(l.price_minor),
          productId: l.product_id,
          product: JSON.parse(l.product_json),
          status: l.status,
          hash: sha256(`${l.product_id}\0${l.quantity}\0${l.price_minor}\0${l.status}`).slice(0, 16),
        })),
      extra: {
        minDeliveryMinutes: String(Number(h) * 60 + Number(m)),
        minDeliveryTime: c?.minDeliveryTime ?? '00:00:00',
        minOrderValue: c?.minOrderValue ?? '0.00',
      },
    };
  });
  return {
    tenant: TENANT,
    id: row.id,
    created: iso(row.created_ms),
    lastChanged: iso(row.changed_ms),
    source: row.source,
    users: s.users.all(TENANT, orderId).map((u) => ({ userId: u.user_id, roles: u.roles.split(',') })),
    orderType: row.order_type,
    total: money(row.total_minor),
    editTotal: money(row.edit_total_minor),
    status: row.status,
    claimCode: row.claim_code,
    buckets,
    closed: row.closed === 1,
    completed: row.completed === 1,
  };
}

/** Appends an event to a stream (a user's, or `venue:<id>`) in the current transaction; returns its frame. */
function appendEvent(stream, type, payloadJson, now) {
  const seq = s.bumpStream.get(TENANT, stream).last_seq;
  s.insertEvent.run(TENANT, stream, seq, type, payloadJson, now);
  return { stream, text: frame(type, seq, payloadJson) };
}

/** The order.changed event to the sync outbox, hash-chained (service.ts recordForSync, sync/up/outbox.ts). */
function recordForSync(cmd, orderJson, now) {
  const version = s.bumpVersion.get(TENANT, cmd.order_id).version;
  const { rounds } = s.order.get(TENANT, cmd.order_id);
  const lineRounds = Object.fromEntries(s.lineRounds.all(TENANT, cmd.order_id).map((l) => [l.id, l.round]));
  const command = JSON.stringify({
    correlationId: cmd.correlation_id,
    kind: cmd.kind,
    userId: cmd.user_id,
    staff: false,
    confirmedAt: iso(cmd.confirmed_ms),
  });
  const detail = JSON.stringify({ contact: null, extra: null, rounds, lineRounds });
  const eventId = uuid7(now);
  const head = JSON.stringify({
    eventId,
    tenant: TENANT,
    stream: 'order',
    aggregate: cmd.order_id,
    kind: 'order.changed',
    schema: 1,
    boxTime: iso(now),
  });
  const body = `{"version":${version},"command":${command},"order":${orderJson},"detail":${detail}}`;
  const envelope = `${head.slice(0, -1)},"body":${body}}`;
  const prev = s.outboxLast.get()?.chain_hash ?? '0'.repeat(64);
  const chain = createHash('sha256').update(Buffer.from(prev, 'hex')).update(envelope, 'utf8').digest('hex');
  s.outboxInsert.run(eventId, TENANT, cmd.order_id, envelope, chain, now);
}

/** `new` as the box applies it (commands/new.ts, rules.ts, service.ts): the rows, totals, outbox and stream events. */
function applyNew(cmd, body, now) {
  if (s.openOrdersOf.get(TENANT, cmd.user_id).n >= MAX_OPEN) {
    throw new Rejected(
      problem('tooManyOpenOrders', `a customer may have at most ${MAX_OPEN} open orders`, [String(MAX_OPEN)]),
    );
  }
  const channel = channelOf(body.orderType);
  const venues = body.buckets.map((b) => {
    const v = getVenue(b.venue);
    if (!v?.active) throw new Rejected(problem('invalidVenue', `venue ${b.venue} is unknown or inactive`, [b.venue]));
    // The box checks the opening hours too; the demo's first venue is open round the clock.
    if (!v.channelConstraints[channel]?.active) {
      throw new Rejected(
        problem('venueClosed', `venue ${v.name} does not take ${body.orderType} orders now`, [b.venue, channel]),
      );
    }
    return v;
  });
  const problems = [];
  const lines = body.buckets.flatMap((b, i) =>
    b.lines.flatMap((l) => {
      const v = venues[i];
      const p = s.product.get(TENANT, v.menu, l.productId);
      if (!p || (p.channels && !p.channels.split(',').includes(channel))) {
        const message = `line ${l.id}: product ${l.productId} is not on the menu for ${channel}`;
        problems.push(problem('invalidProduct', message, [l.id, l.productId]));
      } else if (s.lock.get(TENANT, v.id, p.id) || s.hqLock.get(TENANT, v.id, p.id)) {
        problems.push(
          problem('productUnavailable', `line ${l.id}: product ${p.id} is sold out at ${v.name}`, [l.id, p.id]),
        );
      } else return [{ ...l, venueId: v.id, priceMinor: p.price_minor, productJson: p.snapshot_json }];
      return [];
    }),
  );
  if (problems.length > 0) throw new Rejected(...problems);
  let claim;
  do claim = String(randomInt(0, 1_000_000)).padStart(6, '0');
  while (venues.some((v) => s.claimTaken.get(TENANT, v.id, claim)));
  s.insertOrder.run(TENANT, cmd.order_id, body.orderType, claim, now, now);
  for (const [i, v] of venues.entries()) s.insertBucket.run(TENANT, cmd.order_id, v.id, i, claim);
  s.insertOrderUser.run(TENANT, cmd.order_id, cmd.user_id, 'CREATOR,CUSTOMER');
  for (const l of lines) {
    s.insertLine.run(
      TENANT,
      cmd.order_id,
      l.id,
      l.venueId,
      TENANT,
      cmd.order_id,
      cmd.user_id,
      l.productId,
      l.quantity,
      l.priceMinor,
      l.productJson,
      now,
      now,
    );
  }
  // Totals from the stored lines, as the box's recomputeTotals: editTotal sums NEW lines, total ORDERED ones.
  let edit = 0;
  let total = 0;
  for (const l of s.lines.all(TENANT, cmd.order_id)) {
    if (l.status === 'NEW') edit += l.price_minor * l.quantity;
    else if (l.status === 'ORDERED') total += l.price_minor * l.quantity;
  }
  s.touchOrder.run(edit, total, now, TENANT, cmd.order_id);
  const order = buildOrder(cmd.order_id);
  const payload = JSON.stringify(order);
  recordForSync(cmd, payload, now);
  const streams = new Set([
    ...order.users.map((u) => u.userId),
    cmd.user_id,
    ...order.buckets.map((b) => `venue:${b.venue}`),
  ]);
  return [...streams].map((stream) => appendEvent(stream, 'ORDER_CHANGE', payload, now));
}

/** Every pending command, each in its savepoint, in one transaction: the box's queue (command-queue.ts processBatch). */
const applyBatch = db.transaction(() => {
  const frames = [];
  const commands = s.pending.all(0, BATCH);
  for (const cmd of commands) {
    const now = Date.now();
    try {
      frames.push(...db.transaction(() => applyNew(cmd, JSON.parse(cmd.body_json), now))());
      s.processed.run({ now, outcome: 'applied', seq: cmd.seq });
    } catch (err) {
      // A full disk or an I/O error fails the whole batch; any other error fails only its command, as in the box.
      const code = String(err?.code);
      if (!(err instanceof Rejected) && code.startsWith('SQLITE_') && !code.startsWith('SQLITE_CONSTRAINT')) throw err;
      const codes = err instanceof Rejected ? err.codes : [problem('internal', 'internal error', [cmd.correlation_id])];
      s.processed.run({ now, outcome: err instanceof Rejected ? 'rejected' : 'failed', seq: cmd.seq });
      const note = {
        type: 'OrderEventError',
        users: [cmd.user_id],
        orderId: cmd.order_id,
        event: { correlationId: cmd.correlation_id, user: cmd.user_id, orderId: cmd.order_id },
        message: codes.map((c) => c.message).join('; '),
        codes,
      };
      frames.push(appendEvent(cmd.user_id, 'NOTIFICATION', JSON.stringify(note), now));
    }
  }
  return { frames, count: commands.length };
});

const sockets = new Map(); // user id -> its open sockets
let applyScheduled = false;
function scheduleApply() {
  if (applyScheduled) return;
  applyScheduled = true;
  setImmediate(() => {
    applyScheduled = false;
    let result;
    try {
      result = applyBatch.immediate();
    } catch (err) {
      return console.error(err); // nothing was applied: the next confirmation tries again
    }
    // Pushed only once committed, as the box does; no socket reads a venue stream here.
    for (const f of result.frames) for (const ws of sockets.get(f.stream) ?? []) ws.send(f.text);
    if (result.count === BATCH) scheduleApply();
  });
}

const app = Fastify({ logger: false });
// The token endpoint takes any form (the box's reads grant_type, the client and the username); it is not read here.
app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
  done(null, body),
);

// A user and its token in one transaction, fsynced before the answer, as the box's refresh-token insert is.
const createUser = db.transaction((tokenHash, userId, now) => {
  s.insertUser.run(userId, TENANT, now);
  s.insertToken.run(tokenHash, userId, now + TOKEN_TTL_S * 1000);
});
app.post('/auth-oauth2/oauth/token', async () => {
  const token = randomBytes(32).toString('base64url');
  createUser.immediate(sha256(token), randomUUID(), Date.now());
  return { access_token: token, token_type: 'bearer', expires_in: TOKEN_TTL_S };
});

const object = (required, properties) => ({ type: 'object', required, properties });
const string = { type: 'string' };
const quantity = { type: 'integer', minimum: 1, maximum: 999 };
const line = object(['productId', 'quantity'], { productId: { ...string, minLength: 1 }, quantity });
const bucket = object(['venue'], { venue: string, lines: { type: 'array', maxItems: 200, items: line } });
const schema = {
  body: object(['orderType', 'buckets'], {
    orderType: { enum: ['DELIVERY', 'TAKE_AWAY', 'DINE_IN_OPEN', 'DINE_IN'] },
    buckets: { type: 'array', minItems: 1, maxItems: 8, items: bucket },
  }),
  response: { 200: object([], { correlationId: string, orderId: string, lines: { type: 'array', items: string } }) },
};
const UNAUTHORIZED = {
  message: 'a valid bearer token is required',
  codes: [problem('unauthorized', 'unauthorized', [])],
};
async function authenticate(req, reply) {
  req.principal = principalOf(req.headers.authorization);
  if (!req.principal) return reply.code(401).send(UNAUTHORIZED);
}
const confirm = db.transaction((...row) => s.insertCommand.run(...row));
app.post('/ordering-api/api/order/new', { schema, onRequest: authenticate }, async (req) => {
  const stored = {
    orderType: req.body.orderType,
    buckets: req.body.buckets.map((b) => ({
      venue: b.venue,
      lines: (b.lines ?? []).map((l) => ({ id: randomUUID(), productId: l.productId, quantity: l.quantity })),
    })),
  };
  const correlationId = randomUUID();
  const orderId = randomUUID();
  // Transaction 1: the command is on the disk before its 200, one commit (one fsync) per request: no group commit.
  confirm.immediate(correlationId, TENANT, req.principal.userId, orderId, JSON.stringify(stored), Date.now());
  scheduleApply(); // transaction 2, once this reply is written
  return { correlationId, orderId, lines: stored.buckets.flatMap((b) => b.lines.map((l) => l.id)) };
});

// The event loop's delay as the box's metrics read it: the monitor's resolution subtracted, reset at every read.
const loop = monitorEventLoopDelay({ resolution: 20 });
loop.enable();
app.get('/bench/loop', async () => {
  const ms = (ns) => Math.max(0, ns / 1e6 - 20);
  const result = { p99Ms: ms(loop.percentile(99)), maxMs: ms(loop.max) };
  loop.reset();
  return result;
});

const wss = new WebSocketServer({ noServer: true });
app.server.on('upgrade', (req, socket, head) => {
  const onPath = new URL(req.url, 'http://peer').pathname === '/ordering-api/ws';
  const principal = onPath ? principalOf(req.headers.authorization) : undefined;
  if (!principal) return socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  wss.handleUpgrade(req, socket, head, (ws) => {
    let set = sockets.get(principal.userId);
    if (!set) {
      set = new Set();
      sockets.set(principal.userId, set);
    }
    set.add(ws);
    // HELLO first, its seq the stream's position (src/ws/hub.ts); the socket takes no messages (1008).
    const position = s.position.get(TENANT, principal.userId)?.last_seq ?? 0;
    ws.send(frame('HELLO', position, JSON.stringify({ userId: principal.userId, expiresAt: iso(principal.expMs) })));
    ws.on('message', () => ws.close(1008, 'this socket accepts no messages'));
    ws.on('close', () => {
      set.delete(ws);
      if (set.size === 0) sockets.delete(principal.userId);
    });
  });
});

process.once('SIGTERM', async () => {
  for (const ws of wss.clients) ws.close(1001, 'peer is stopping');
  const force = setTimeout(() => {
    for (const ws of wss.clients) ws.terminate();
  }, 500); // a client that never answers
  wss.close();
  await app.close();
  clearTimeout(force);
  // Commands confirmed but not yet applied are applied before the database closes, as the box drains its queue.
  while (applyBatch.immediate().count === BATCH);
  db.close();
  process.exit(0);
});

await app.listen({ port: Number(opts.port), host: opts.host });
console.log(JSON.stringify({ msg: 'peer listening', port: app.server.address().port }));
