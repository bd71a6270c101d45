import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { migrate } from '../../db/migrate.js';
import { createOutbox } from './up/outbox.js';
import { createSyncRepo } from './repo.js';
import { staleWarning, syncStatus } from './status.js';

const HOUR = 3_600_000;

test('status counts the backlog from the acknowledged position, and warns once the oldest is past the limit', () => {
  const db = new Database(':memory:');
  migrate(db);
  const repo = createSyncRepo(db);
  const outbox = createOutbox(repo);
  const dir = mkdtempSync(join(tmpdir(), 'vb-status-')); // no device file: not enrolled
  const t0 = Date.UTC(2026, 10, 23, 8);
  for (let i = 0; i < 3; i++)
    outbox.append('t', 'warehouse.changed', `w${i}`, { id: `w${i}`, name: 'M' }, t0 + i * HOUR);

  let s = syncStatus(repo, dir, t0 + 7 * HOUR);
  expect(s).toMatchObject({
    central: null,
    deviceId: null,
    backlog: 3,
    oldestUnsyncedAgeS: 7 * 3600,
    newestSeq: 3,
    ackedSeq: 0,
  });
  expect(staleWarning(s, 6)).toMatchObject({ backlog: 3, oldestUnsyncedAgeS: 7 * 3600 });
  expect(staleWarning(s, 8)).toBeUndefined();

  repo.ack(1, repo.one(1)!.chainHash, t0 + 7 * HOUR, []);
  s = syncStatus(repo, dir, t0 + 7 * HOUR);
  expect(s).toMatchObject({
    backlog: 2,
    oldestUnsyncedAgeS: 6 * 3600,
    lastSuccessAt: new Date(t0 + 7 * HOUR).toISOString(),
  });
  expect(staleWarning(s, 6)).toBeUndefined();

  repo.ack(3, repo.one(3)!.chainHash, t0 + 8 * HOUR, [{ seq: 2, eventId: 'e', reason: 'unknown venue' }]);
  s = syncStatus(repo, dir, t0 + 30 * HOUR);
  expect(s).toMatchObject({ backlog: 0, oldestUnsyncedAgeS: null, deadLetters: 1 });
  expect(staleWarning(s, 6)).toBeUndefined();
});
