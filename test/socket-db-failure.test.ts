import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestBox, type TestBox } from './support/box.js';
import { openSocket } from './support/socket.js';

let box: TestBox;
beforeAll(async () => {
  box = await startTestBox();
});
afterAll(async () => {
  await box.stop();
});

// A socket's HELLO takes the next seq of its stream: a write. When the database refuses it (another
// connection holds the write lock past busy_timeout, such as `venue-box stock rebuild`; a full SD card),
// the error must not be thrown into uWS's open callback, which ends the process.
test('a socket whose HELLO cannot be written is closed with 1011, and the box keeps running', async () => {
  const t = await box.token();
  const other = new Database(join(box.dataDir, 'venue-box.db'));
  other.exec('BEGIN IMMEDIATE');
  try {
    const ws = await openSocket(box.wsUrl('/ordering-api/ws'), t.access_token);
    expect((await ws.closed).code).toBe(1011);
  } finally {
    other.exec('ROLLBACK');
    other.close();
  }
  expect(box.proc.exitCode).toBeNull();
  expect(box.proc.signalCode).toBeNull();
  const ws = await openSocket(box.wsUrl('/ordering-api/ws'), t.access_token);
  expect((await ws.next('HELLO')).payload.userId).toBe(t.UUID);
  ws.close();
}, 30_000);
