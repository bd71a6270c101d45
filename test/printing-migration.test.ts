import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { MIGRATIONS, migrate } from '../src/db/migrate.js';

test("print_jobs (migration 3): a queued job has a printer, an unrouted one none; states are the spooler's", () => {
  const db = new Database(':memory:');
  migrate(
    db,
    MIGRATIONS.filter((m) => m.version < 3),
  );
  db.exec(`INSERT INTO orders (tenant_id, id, order_type, status, claim_code, total_minor, edit_total_minor, closed, completed,
    source, created_ms, changed_ms) VALUES ('t', 'o', 'TAKE_AWAY', 'NEW', '123456', 0, 0, 0, 0, 'venue-box', 1, 1)`);
  migrate(db);
  const insert =
    db.prepare(`INSERT INTO print_jobs (tenant_id, id, venue_id, order_id, kind, round, printer, payload_json, state, created_ms)
    VALUES ('t', ?, 'v', 'o', 'kitchen', 1, ?, '{}', ?, 1)`);
  insert.run('a', 'hot', 'queued');
  insert.run('b', null, 'unrouted');
  expect(() => insert.run('c', null, 'queued')).toThrow(/CHECK constraint failed/);
  expect(() => insert.run('d', 'hot', 'unrouted')).toThrow(/CHECK constraint failed/);
  expect(() => insert.run('e', 'hot', 'printing')).toThrow(/CHECK constraint failed: state/);
  expect(
    db.prepare('SELECT id, attempts, last_error, printed_on, copy_of, done_ms FROM print_jobs WHERE id = ?').get('a'),
  ).toEqual({
    id: 'a',
    attempts: 0,
    last_error: null,
    printed_on: null,
    copy_of: null,
    done_ms: null,
  });
  // A printer's queue is read from its partial index, oldest first.
  const plan = db
    .prepare(`EXPLAIN QUERY PLAN SELECT * FROM print_jobs
    WHERE tenant_id = 't' AND printer = 'hot' AND state = 'queued' ORDER BY rowid LIMIT 1`)
    .all() as { detail: string }[];
  expect(plan.map((p) => p.detail).join(' ')).toMatch(/USING INDEX print_jobs_queue/);
  expect(plan.map((p) => p.detail).join(' ')).not.toMatch(/TEMP B-TREE/);
  db.close();
});
