import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { createEventStore } from '../../modules/events/event-store.js';
import { createOutbox } from '../../modules/sync/up/outbox.js';
import { orderChange } from '../../shared/socket-protocol.js';
import { createSyncRepo } from '../../modules/sync/repo.js';
import { migrate, MIGRATIONS } from '../migrate.js';

const upTo11 = MIGRATIONS.filter((m) => m.version <= 11);
const indexesOf = (db: Database.Database, table: string) =>
  db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY name").pluck().all(table);

test('0012 keeps the command log, the outbox and the events row for row, with fewer and smaller indexes', () => {
  const db = new Database(':memory:');
  expect(migrate(db, upTo11)).toBe(11);
  const command = db.prepare(`INSERT INTO order_commands (correlation_id, tenant_id, user_id, staff, order_id, kind,
    body_json, confirmed_ms, processed_ms, outcome) VALUES (?, 't', 'u', 0, 'o', 'new', '{}', ?, ?, ?)`);
  command.run('c1', 10, 11, 'applied');
  command.run('c2', 20, null, null);
  command.run('c3', 30, null, null);
  const event = db.prepare(`INSERT INTO sync_outbox (event_id, tenant_id, kind, aggregate_id, envelope, chain_hash,
    created_ms) VALUES (?, 't', 'order.changed', 'o', ?, ?, ?)`);
  // Stamped on a set clock: the retention never ages a 1970 stamp (docs/sync.md "Clocks").
  const stamp = Date.UTC(2026, 0, 1);
  for (let i = 1; i <= 4; i++) event.run(`e${i}`, `{"n":${i}}`, `h${i}`, stamp + i);
  db.exec('DELETE FROM sync_outbox WHERE seq < 3');
  const commands = db.prepare('SELECT * FROM order_commands ORDER BY seq').all();
  const outboxRows = db.prepare('SELECT * FROM sync_outbox ORDER BY seq').all();
  const put = db.prepare(
    "INSERT INTO user_events (tenant_id, user_id, seq, type, payload_json, created_ms) VALUES (?, ?, ?, 'ORDER_CHANGE', '{}', ?)",
  );
  // Two tenants with a stream of the same name, interleaved; the first rows gone to the retention.
  for (const [tenant, user, seq, at] of [
    ['t', 'u', 1, 1],
    ['t', 'u', 2, 2],
    ['t2', 'u', 1, 3],
    ['t', 'v', 1, 4],
    ['t', 'u', 3, 5],
    ['t2', 'u', 2, 6],
  ] as const) {
    put.run(tenant, user, seq, at);
  }
  db.exec('DELETE FROM user_events WHERE rowid < 2');
  const streamEvents = db.prepare('SELECT rowid, * FROM user_events ORDER BY rowid').all();
  expect(indexesOf(db, 'order_commands')).toEqual(['order_commands_pending', 'sqlite_autoindex_order_commands_1']);
  expect(indexesOf(db, 'sync_outbox')).toEqual(['sqlite_autoindex_sync_outbox_1']);

  expect(
    migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 12),
    ),
  ).toBe(12);
  expect(db.prepare('SELECT * FROM order_commands ORDER BY seq').all()).toEqual(commands);
  expect(db.prepare('SELECT * FROM sync_outbox ORDER BY seq').all()).toEqual(outboxRows);
  expect(indexesOf(db, 'order_commands')).toEqual(['order_commands_central_new', 'order_commands_pending']);
  // A correlation id stays unique where it is the order's id (a central order's `new`), and only there.
  const central = db.prepare(`INSERT INTO order_commands (correlation_id, tenant_id, user_id, staff, order_id, kind,
    body_json, confirmed_ms) VALUES (?, 't', 'central', 1, ?, 'new', '{}', 40)`);
  central.run('o9', 'o9');
  expect(() => central.run('o9', 'o9')).toThrow(expect.objectContaining({ code: 'SQLITE_CONSTRAINT_UNIQUE' }));
  central.run('c9', 'o9');
  central.run('c9', 'o10');
  db.exec('DELETE FROM order_commands WHERE seq > 3');
  expect(indexesOf(db, 'sync_outbox')).toEqual([]);
  expect(db.prepare('SELECT rowid, * FROM user_events ORDER BY rowid').all()).toEqual(streamEvents);
  expect(indexesOf(db, 'user_events')).toEqual(['user_events_stream']);
  expect(db.prepare("SELECT count(*) FROM sqlite_sequence WHERE name LIKE 'sync_outbox%'").pluck().get()).toBe(0);
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  // The pending index still serves the queue: the two unprocessed commands, in order.
  expect(db.prepare('SELECT seq FROM order_commands WHERE processed_ms IS NULL ORDER BY seq').pluck().all()).toEqual([
    2, 3,
  ]);

  // Each stream goes on from its own newest event, found by the new index.
  const events = createEventStore(db);
  expect([events.position('t', 'u'), events.position('t2', 'u'), events.position('t', 'v')]).toEqual([3, 2, 1]);
  expect(events.append('t2', 'u', orderChange('{}'), 7).seq).toBe(3);
  expect(events.page('t', 'u', 0, 10, 1_000_000).map((f) => f.seq)).toEqual([2, 3]);
  const plan = db
    .prepare(`EXPLAIN QUERY PLAN SELECT seq FROM user_events WHERE user_id = 'u' AND tenant_id = 't'
    ORDER BY seq DESC LIMIT 1`)
    .all() as { detail: string }[];
  expect(plan.map((p) => p.detail)).toEqual([expect.stringContaining('USING INDEX user_events_stream (user_id=?)')]);
  // A claim code is looked up by the code, the tenant read from the row.
  const claim = db
    .prepare(`EXPLAIN QUERY PLAN SELECT 1 AS one FROM orders o INDEXED BY orders_open_claim, json_each(o.venues_json) v
    WHERE o.tenant_id = ? AND o.claim_code = ? AND o.closed = 0 AND v.value = ? LIMIT 1`)
    .all('t', '1', 'v') as { detail: string }[];
  expect(claim.map((p) => p.detail).join('\n')).toMatch(/SEARCH o USING INDEX orders_open_claim \(claim_code=\?\)/);

  // Numbers go on from the newest row, which the retention never removes, and the chain from its hash.
  const repo = createSyncRepo(db);
  const outbox = createOutbox(repo);
  expect(outbox.append('t', 'order.changed', 'o', { json: '{}' }, 5)).toBe(5);
  expect(repo.prune(5, Number.MAX_SAFE_INTEGER)).toBe(2);
  expect(outbox.append('t', 'order.changed', 'o', { json: '{}' }, 6)).toBe(6);
  expect(db.prepare('SELECT seq FROM sync_outbox ORDER BY seq').pluck().all()).toEqual([5, 6]);
});
