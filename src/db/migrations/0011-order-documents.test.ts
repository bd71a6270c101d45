import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { createOrderRepo } from '../../modules/ordering/repo.js';
import { migrate, MIGRATIONS } from '../migrate.js';

const upTo10 = MIGRATIONS.filter((m) => m.version <= 10);
const upTo11 = MIGRATIONS.filter((m) => m.version <= 11);

/** A version-10 database with two orders written the way that version wrote them, rows out of position order. */
function version10(): Database.Database {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  expect(migrate(db, upTo10)).toBe(10);
  db.exec(`
    INSERT INTO orders (tenant_id, id, order_type, status, claim_code, total_minor, edit_total_minor, closed, completed,
      source, contact_json, extra_json, created_ms, changed_ms, rounds, version)
    VALUES ('t', 'open', 'DINE_IN_OPEN', 'ORDERED', '111111', 2400, 900, 0, 0, 'kiosk', '{"phone":"1"}', NULL, 10, 20, 1, 4),
           ('t', 'closed', 'TAKE_AWAY', 'COMPLETED', '222222', 500, 0, 1, 1, 'box', NULL, '{"a":"b"}', 30, 40, 1, 3),
           ('t', 'bare', 'TAKE_AWAY', 'NEW', '333333', 0, 0, 0, 0, 'box', NULL, NULL, 50, 50, 0, 1);
    INSERT INTO order_buckets (tenant_id, order_id, venue_id, position, claim_code, open)
    VALUES ('t', 'open', 'v2', 1, '111111', 1), ('t', 'open', 'v1', 0, '111111', 1), ('t', 'closed', 'v1', 0, '222222', 0);
    INSERT INTO order_lines (tenant_id, order_id, id, venue_id, position, creator, product_id, quantity, price_minor,
      status, product_json, created_ms, updated_ms, round, note)
    VALUES ('t', 'open', 'l2', 'v2', 1, 'u1', 'p2', 1, 900, 'NEW', '{"name":"Pierogi \\"ruskie\\""}', 12, 12, NULL, NULL),
           ('t', 'open', 'l1', 'v1', 0, 'u1', 'p1', 2, 1200, 'ORDERED', '{"name":"Zurek"}', 11, 15, 1, 'no onion'),
           ('t', 'closed', 'l3', 'v1', 0, 'u2', 'p1', 1, 500, 'ORDERED', '{}', 31, 35, 1, NULL);
    INSERT INTO order_users (tenant_id, order_id, user_id, roles, open)
    VALUES ('t', 'open', 'u1', 'CREATOR,CUSTOMER', 1), ('t', 'open', 'u3', 'odd"role\\x', 1),
           ('t', 'closed', 'u2', 'CREATOR,CUSTOMER', 0), ('t', 'closed', 'u1', 'GUEST', 0);
  `);
  return db;
}

test('0011 makes each order of a version-10 database one row, with its venues, lines and users in their order', () => {
  const db = version10();
  expect(migrate(db, upTo11)).toBe(11);
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  expect(db.pragma('foreign_key_check')).toEqual([]);
  const tables = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'order%'").all() as { name: string }[]
  ).map((t) => t.name);
  expect(tables.sort()).toEqual(['order_commands', 'orders']);

  const repo = createOrderRepo(db);
  expect(repo.rows('t', 'open')).toEqual({
    row: {
      tenant_id: 't',
      id: 'open',
      order_type: 'DINE_IN_OPEN',
      status: 'ORDERED',
      claim_code: '111111',
      total_minor: 2400,
      edit_total_minor: 900,
      closed: 0,
      completed: 0,
      source: 'kiosk',
      contact_json: '{"phone":"1"}',
      extra_json: null,
      created_ms: 10,
      changed_ms: 20,
      rounds: 1,
      version: 4,
    },
    venueIds: ['v1', 'v2'],
    lines: [
      {
        id: 'l1',
        venue_id: 'v1',
        creator: 'u1',
        product_id: 'p1',
        quantity: 2,
        price_minor: 1200,
        status: 'ORDERED',
        product_json: '{"name":"Zurek"}',
        created_ms: 11,
        updated_ms: 15,
        round: 1,
        note: 'no onion',
      },
      {
        id: 'l2',
        venue_id: 'v2',
        creator: 'u1',
        product_id: 'p2',
        quantity: 1,
        price_minor: 900,
        status: 'NEW',
        product_json: '{"name":"Pierogi \\"ruskie\\""}',
        created_ms: 12,
        updated_ms: 12,
        round: null,
        note: null,
      },
    ],
    // A role the box never wrote (a quote, a backslash) comes through as it was.
    users: [
      { userId: 'u1', roles: ['CREATOR', 'CUSTOMER'] },
      { userId: 'u3', roles: ['odd"role\\x'] },
    ],
  });
  expect(repo.rows('t', 'closed')).toMatchObject({
    venueIds: ['v1'],
    users: [
      { userId: 'u2', roles: ['CREATOR', 'CUSTOMER'] },
      { userId: 'u1', roles: ['GUEST'] },
    ],
  });
  expect(repo.rows('t', 'bare')).toMatchObject({ venueIds: [], lines: [], users: [] });

  // The users' orders and the open orders' claim codes carry over.
  expect([
    repo.openOrdersOf('t', 'u1', 20),
    repo.openOrdersOf('t', 'u2', 20),
    repo.openOrdersOf('t', 'u3', 20),
  ]).toEqual([1, 0, 1]);
  expect([repo.userHasOrder('t', 'u2'), repo.userHasOrder('t', 'u4')]).toEqual([true, false]);
  expect([
    repo.claimTaken('t', 'v1', '111111'),
    repo.claimTaken('t', 'v2', '111111'),
    repo.claimTaken('t', 'v3', '111111'),
    repo.claimTaken('t', 'v1', '222222'),
  ]).toEqual([true, true, false, false]);
});

test('the indexes a command reads are the ones it uses: open orders from user_orders, claim codes from open orders', () => {
  const db = new Database(':memory:');
  migrate(db, upTo11);
  const plan = (sql: string, ...params: unknown[]) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((p) => p.detail).join('\n');
  expect(
    plan(
      'SELECT COUNT(*) AS n FROM (SELECT 1 FROM user_orders WHERE tenant_id = ? AND user_id = ? AND open = 1 LIMIT +?)',
      't',
      'u',
      20,
    ),
  ).toMatch(/SEARCH user_orders USING PRIMARY KEY \(tenant_id=\? AND user_id=\? AND open=\?\)/);
  expect(
    plan(
      `SELECT 1 AS one FROM orders o INDEXED BY orders_open_claim, json_each(o.venues_json) v
    WHERE o.tenant_id = ? AND o.claim_code = ? AND o.closed = 0 AND v.value = ? LIMIT 1`,
      't',
      '1',
      'v',
    ),
  ).toMatch(/SEARCH o USING INDEX orders_open_claim \(tenant_id=\? AND claim_code=\?\)/);
  // The staff list reads the ascending index backwards, with no sort of its own.
  const list = plan(
    `SELECT o.id, o.created_ms FROM orders o WHERE o.tenant_id = ? AND o.status IN ('NEW')
    ORDER BY o.created_ms DESC, o.id DESC LIMIT +?`,
    't',
    50,
  );
  expect(list).toMatch(/SEARCH o USING INDEX orders_newest \(tenant_id=\?\)/);
  expect(list).not.toMatch(/TEMP B-TREE/);
});
