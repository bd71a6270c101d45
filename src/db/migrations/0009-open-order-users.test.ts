import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { createOrderRepo, type ReinstatedOrder } from '../../modules/ordering/repo.js';
import { migrate, MIGRATIONS } from '../migrate.js';
import { migration0009 } from './0009-open-order-users.js';

const upTo8 = MIGRATIONS.filter((m) => m.version <= 8);

function insertOrder(db: Database.Database, id: string, closed: number, users: string[]): void {
  db.prepare(`INSERT INTO orders (tenant_id, id, order_type, status, claim_code, total_minor, edit_total_minor, closed,
    completed, source, created_ms, changed_ms) VALUES ('t', ?, 'TAKE_AWAY', ?, '000001', 0, 0, ?, 0, 'box', 1, 1)`).run(
    id,
    closed ? 'CANCELLED' : 'NEW',
    closed,
  );
  for (const u of users)
    db.prepare("INSERT INTO order_users (tenant_id, order_id, user_id, roles) VALUES ('t', ?, ?, 'CREATOR')").run(
      id,
      u,
    );
}

test('0009 marks the users of closed orders of a version-8 database, and their open orders count from the index', () => {
  const db = new Database(':memory:');
  expect(migrate(db, upTo8)).toBe(8);
  insertOrder(db, 'open-1', 0, ['ala', 'ola']);
  insertOrder(db, 'closed-1', 1, ['ala']);
  insertOrder(db, 'open-2', 0, ['ala']);

  expect(migrate(db, [...upTo8, migration0009])).toBe(9);
  expect(db.prepare('SELECT order_id, user_id, open FROM order_users ORDER BY order_id, user_id').all()).toEqual([
    { order_id: 'closed-1', user_id: 'ala', open: 0 },
    { order_id: 'open-1', user_id: 'ala', open: 1 },
    { order_id: 'open-1', user_id: 'ola', open: 1 },
    { order_id: 'open-2', user_id: 'ala', open: 1 },
  ]);
  // The count (as version 9 to 10 made it) reads the index alone: no lookup in the orders table.
  const count = `SELECT COUNT(*) AS n FROM (SELECT 1 FROM order_users INDEXED BY order_users_user
    WHERE tenant_id = ? AND user_id = ? AND open = 1 LIMIT +?)`;
  const n = (user: string, atMost: number) => (db.prepare(count).get('t', user, atMost) as { n: number }).n;
  expect([n('ala', 20), n('ola', 20), n('ela', 20), n('ala', 1)]).toEqual([2, 1, 0, 1]);
  const plan = db.prepare(`EXPLAIN QUERY PLAN ${count}`).all('t', 'ala', 20) as { detail: string }[];
  expect(plan.map((p) => p.detail).join('\n')).toMatch(
    /USING COVERING INDEX order_users_user \(tenant_id=\? AND user_id=\? AND open=\?\)/,
  );
});

test('the open flag follows the order: listed open, cleared on close, put back as the snapshot says', () => {
  const db = new Database(':memory:');
  migrate(db);
  const repo = createOrderRepo(db);
  insertOrder(db, 'o1', 0, []);
  repo.insertUser('t', 'o1', 'ala', ['CREATOR']);
  expect(repo.openOrdersOf('t', 'ala', 20)).toBe(1);
  repo.closeOrder('t', 'o1', 'COMPLETED', true, 2);
  expect(repo.openOrdersOf('t', 'ala', 20)).toBe(0);
  expect(repo.userHasOrder('t', 'ala')).toBe(true);

  const snapshot = (id: string, closed: number): ReinstatedOrder => ({
    tenantId: 't',
    id,
    orderType: 'TAKE_AWAY',
    status: closed ? 'CANCELLED' : 'NEW',
    claimCode: '000002',
    totalMinor: 0,
    editTotalMinor: 0,
    closed,
    completed: 0,
    source: 'box',
    contactJson: null,
    extraJson: null,
    createdMs: 1,
    changedMs: 1,
    rounds: 0,
    version: 1,
    buckets: [],
    lines: [],
    users: [{ userId: 'ola', roles: ['CREATOR'] }],
  });
  repo.replaceOrder(snapshot('o2', 0));
  expect(repo.openOrdersOf('t', 'ola', 20)).toBe(1);
  repo.replaceOrder(snapshot('o2', 1));
  expect(repo.openOrdersOf('t', 'ola', 20)).toBe(0);
});
