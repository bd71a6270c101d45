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

// A socket's open reads the database (the stream's position, the replay's size) and writes nothing: the HELLO
// takes no number of its own (docs/api.md "The socket"). So a socket opens while another connection holds the write
// lock past busy_timeout (such as `venue-box stock rebuild`; a full SD card), where a HELLO that took a number
// could not; a read error there would still be answered with 1011, never thrown into uWS's open callback.
test('a socket opens while another connection holds the write lock, and the box keeps running', async () => {
  const t = await box.token();
  const other = new Database(join(box.dataDir, 'venue-box.db'));
  other.exec('BEGIN IMMEDIATE');
  try {
    const ws = await openSocket(box.wsUrl('/ordering-api/ws'), t.access_token);
    expect(await ws.next('HELLO')).toMatchObject({ seq: 0, payload: { userId: t.UUID } });
    ws.close();
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
