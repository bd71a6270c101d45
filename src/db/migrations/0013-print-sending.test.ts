import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { createPrintRepo } from '../../modules/printing/repo.js';
import { migrate, MIGRATIONS } from '../migrate.js';

test('0013 keeps every print job as it was; a takeover fails only the jobs begun sending', () => {
  const db = new Database(':memory:');
  expect(
    migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 12),
    ),
  ).toBe(12);
  db.exec(`
    INSERT INTO orders (tenant_id, id, order_type, status, claim_code, total_minor, edit_total_minor, closed, completed,
      source, created_ms, changed_ms, rounds, version)
    VALUES ('t', 'o', 'TAKE_AWAY', 'ORDERED', '111111', 0, 0, 0, 0, 'box', 1, 1, 1, 1);
    INSERT INTO print_jobs (tenant_id, id, venue_id, order_id, kind, round, printer, payload_json, state, created_ms)
    VALUES ('t', 'sent', 'v', 'o', 'kitchen', 1, 'grill', '{}', 'queued', 10),
           ('t', 'waiting', 'v', 'o', 'kitchen', 1, 'grill', '{}', 'queued', 11),
           ('t', 'done', 'v', 'o', 'kitchen', 1, 'grill', '{}', 'printed', 12);
  `);
  const before = db.prepare('SELECT * FROM print_jobs ORDER BY id').all();
  expect(migrate(db)).toBe(13);
  const after = db.prepare('SELECT * FROM print_jobs ORDER BY id').all() as Record<string, unknown>[];
  expect(after.map(({ sending_ms, ...rest }) => rest)).toEqual(before);
  expect(after.every((r) => r.sending_ms === null)).toBe(true);

  const repo = createPrintRepo(db);
  repo.markSending('t', 'sent', 100);
  repo.markSending('t', 'done', 100);
  expect(repo.failSentByAnother(200, 'reason')).toEqual(['sent']);
  expect(repo.get('t', 'sent')).toMatchObject({ state: 'failed', lastError: 'reason' });
  expect(repo.get('t', 'waiting')).toMatchObject({ state: 'queued' });
  expect(repo.get('t', 'done')).toMatchObject({ state: 'printed' });
});
