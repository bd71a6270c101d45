import { expect, test } from 'vitest';
import { type Db, startCheckpointer } from './open.js';

// A checkpoint writes into the database file: on a full SD card it fails with SQLITE_FULL. Thrown from the
// timer, that would end the process; the next tick tries again, and the WAL keeps every commit meanwhile.
test('a failing checkpoint is reported, never thrown out of its timer', async () => {
  const errors: unknown[] = [];
  const db = { pragma: () => { throw new Error('database or disk is full'); } } as unknown as Db;
  const stop = startCheckpointer(db, 5, 16_384, (err) => errors.push(err));
  await new Promise((r) => setTimeout(r, 40));
  stop();
  expect(errors.length).toBeGreaterThan(0);
  expect(String(errors[0])).toContain('disk is full');
});
