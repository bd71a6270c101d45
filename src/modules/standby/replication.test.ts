import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, test } from 'vitest';
import { openDatabase } from '../../db/open.js';
import { createReplicaWal } from './replica-wal.js';
import { openSnapshot } from './snapshot.js';
import { createWalPin } from './wal-pin.js';
import { createWalReader } from './wal-reader.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vb-repl-'));
  dirs.push(dir);
  return dir;
}
const rows = (file: string): unknown[] => {
  const db = new Database(file, { readonly: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    return db.prepare('SELECT id, body FROM t ORDER BY id').all();
  } finally {
    db.close();
  }
};

test('a snapshot and the transactions after it make the primary database, page for page', async () => {
  const dir = temp();
  const file = join(dir, 'p.db');
  const db = openDatabase(file);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)');
  const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
  for (let i = 0; i < 50; i++) insert.run('x'.repeat(500 + i));
  const pin = createWalPin(file);
  const reader = createWalReader(`${file}-wal`);
  const first = reader.read(undefined);
  pin.renew();
  expect(first.transactions.length).toBeGreaterThan(0);
  const standbyFile = join(temp(), 's.db');
  const snap = openSnapshot(file, `${file}-wal`, first.cursor, first.transactions.at(-1)!.dbPages);
  const chunks: Buffer[] = [];
  for (let c = snap.read(7); c.length > 0; c = snap.read(7)) chunks.push(c);
  snap.close();
  writeFileSync(standbyFile, Buffer.concat(chunks));
  expect(rows(standbyFile)).toEqual(db.prepare('SELECT id, body FROM t ORDER BY id').all());

  // More commits, a delete that shrinks the file, then the replica follows them through its own WAL.
  db.transaction(() => {
    for (let i = 0; i < 200; i++) insert.run('y'.repeat(300));
  })();
  db.exec('DELETE FROM t WHERE id % 3 = 0');
  const next = reader.read(first.cursor);
  expect(next.restarted).toBe(false);
  const replica = createReplicaWal(standbyFile, 1024);
  await replica.appendAsync(next.transactions);
  replica.close();
  // A copy taken now (database and WAL, as a power cut leaves them) opens as the primary's database.
  const copy = join(temp(), 'c.db');
  copyFileSync(standbyFile, copy);
  copyFileSync(`${standbyFile}-wal`, `${copy}-wal`);
  expect(rows(copy)).toEqual(db.prepare('SELECT id, body FROM t ORDER BY id').all());
  replica.checkpoint();
  expect(rows(standbyFile)).toEqual(db.prepare('SELECT id, body FROM t ORDER BY id').all());
  pin.close();
  reader.close();
  db.close();
});

test('a torn append is ignored: the copy is the primary as of its last whole transaction', async () => {
  const dir = temp();
  const file = join(dir, 'p.db');
  const db = openDatabase(file);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)');
  db.pragma('wal_checkpoint(TRUNCATE)');
  const standbyFile = join(temp(), 's.db');
  copyFileSync(file, standbyFile);
  const reader = createWalReader(`${file}-wal`);
  const pin = createWalPin(file);
  pin.renew();
  db.prepare('INSERT INTO t (body) VALUES (?)').run('kept');
  const a = reader.read(undefined);
  db.prepare('INSERT INTO t (body) VALUES (?)').run('torn');
  const b = reader.read(a.cursor);
  const replica = createReplicaWal(standbyFile, 1024);
  await replica.appendAsync(a.transactions);
  replica.close();
  // The second transaction's frames, cut short as a power cut would.
  const walBytes = Buffer.concat(b.transactions[0]!.pages.map((p) => p.data)).subarray(0, 700);
  const wal = `${standbyFile}-wal`;
  writeFileSync(wal, walBytes, { flag: 'a' });
  expect(rows(standbyFile)).toEqual([{ id: 1, body: 'kept' }]);
  pin.close();
  reader.close();
  db.close();
});

test('while pinned the WAL does not restart; released and written, it does, and the reader says so', () => {
  const file = join(temp(), 'p.db');
  const db = openDatabase(file);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)');
  const reader = createWalReader(`${file}-wal`);
  const pin = createWalPin(file);
  const first = reader.read(undefined);
  pin.renew();
  db.prepare('INSERT INTO t (body) VALUES (?)').run('a');
  db.pragma('wal_checkpoint(PASSIVE)');
  db.prepare('INSERT INTO t (body) VALUES (?)').run('b');
  const held = reader.read(first.cursor);
  expect(held.restarted).toBe(false);
  expect(held.transactions).toHaveLength(2);
  pin.release();
  db.pragma('wal_checkpoint(PASSIVE)');
  db.prepare('INSERT INTO t (body) VALUES (?)').run('c');
  const after = reader.read(held.cursor);
  expect(after.restarted).toBe(true);
  expect(after.transactions).toHaveLength(1);
  pin.close();
  reader.close();
  db.close();
});
