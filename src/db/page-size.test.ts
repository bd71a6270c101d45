import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, test, vi } from 'vitest';
import type { Logger } from '../log.js';
import { migrate, MIGRATIONS } from './migrate.js';
import { openDatabase, PAGE_SIZE } from './open.js';
import { convertPageSize, pageSizeOf } from './page-size.js';

const dir = mkdtempSync(join(tmpdir(), 'vb-page-size-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quietLog = () => ({ info: vi.fn(), warn: vi.fn() });
const ROWS = 3000;

/**
 * A database as a box before PAGE_SIZE made it, copied while its writer is open: its last rows only in the WAL,
 * as a box killed -9 leaves them.
 */
function oldBoxDatabase(name: string): string {
  const file = join(dir, name);
  const writerFile = join(mkdtempSync(join(dir, 'writer-')), name);
  const writer = new Database(writerFile);
  writer.pragma('page_size = 4096');
  writer.pragma('journal_mode = WAL');
  writer.pragma('wal_autocheckpoint = 0');
  migrate(writer);
  const put = writer.prepare('INSERT INTO meta (key, value) VALUES (?, hex(randomblob(100)))');
  writer.transaction(() => {
    for (let i = 0; i < ROWS; i++) put.run(`k${i}`);
  })();
  writer.pragma('wal_checkpoint(TRUNCATE)');
  writer.prepare("INSERT INTO meta (key, value) VALUES ('only-in-the-wal', 'yes')").run();
  copyFileSync(writerFile, file);
  copyFileSync(`${writerFile}-wal`, `${file}-wal`);
  writer.close();
  return file;
}

test('a database with 4 KiB pages is rewritten once with 1 KiB pages, every row and its schema version kept', () => {
  const file = oldBoxDatabase('old.db');
  mkdirSync(`${file}.page-size`); // what a rewrite cut short might leave, or anything else by that name
  writeFileSyncEmpty(join(`${file}.page-size`, 'x'));
  chmodSync(file, 0o600);
  const log = quietLog();
  expect(convertPageSize(file, log as unknown as Logger)).toBe(true);
  expect(log.info).toHaveBeenCalledWith(expect.objectContaining({ from: 4096, to: PAGE_SIZE }), expect.any(String));
  expect(readdirSync(dir).filter((n) => n.startsWith('old.db'))).toEqual(['old.db']);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(pageSizeOf(file)).toBe(PAGE_SIZE);

  const db = openDatabase(file);
  expect(db.pragma('page_size', { simple: true })).toBe(PAGE_SIZE);
  expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
  expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)!.version);
  expect(db.prepare("SELECT count(*) FROM meta WHERE key LIKE 'k%'").pluck().get()).toBe(ROWS);
  expect(db.prepare("SELECT value FROM meta WHERE key = 'only-in-the-wal'").pluck().get()).toBe('yes');
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  expect(migrate(db)).toBe(MIGRATIONS.at(-1)!.version);
  db.close();
  expect(convertPageSize(file, quietLog() as unknown as Logger)).toBe(false);
});

test('a new database is made with 1 KiB pages and is left as it is; a file without a header is not read as one', () => {
  const file = join(dir, 'new.db');
  openDatabase(file).close();
  expect(pageSizeOf(file)).toBe(PAGE_SIZE);
  writeFileSyncEmpty(join(dir, 'empty.db'));
  expect(pageSizeOf(join(dir, 'empty.db'))).toBeUndefined();
  expect(convertPageSize(join(dir, 'empty.db'), quietLog() as unknown as Logger)).toBe(false);
  expect(convertPageSize(file, quietLog() as unknown as Logger)).toBe(false);
  expect(convertPageSize(join(dir, 'absent.db'), quietLog() as unknown as Logger)).toBe(false);
  expect(existsSync(join(dir, 'absent.db'))).toBe(false);
});

test('without twice its size free, or when SQLite cannot read it, the database keeps its pages and the box goes on', () => {
  const file = oldBoxDatabase('full.db');
  const log = quietLog();
  expect(convertPageSize(file, log as unknown as Logger, () => 100 * 1024)).toBe(false);
  expect(log.warn).toHaveBeenCalledWith(
    expect.objectContaining({ pageSize: 4096, freeBytes: 100 * 1024 }),
    expect.any(String),
  );
  const db = new Database(file);
  expect(db.pragma('page_size', { simple: true })).toBe(4096);
  expect(db.prepare("SELECT value FROM meta WHERE key = 'only-in-the-wal'").pluck().get()).toBe('yes');
  db.close();

  // Pages of its tables overwritten: the copy fails half way, and nothing is left of it.
  const broken = oldBoxDatabase('broken.db');
  const fd = openSync(broken, 'r+');
  writeSync(fd, Buffer.alloc(4096 * 8, 0xa5), 0, 4096 * 8, 4096 * 20);
  closeSync(fd);
  const brokenLog = quietLog();
  expect(convertPageSize(broken, brokenLog as unknown as Logger)).toBe(false);
  expect(brokenLog.warn).toHaveBeenCalledWith(expect.objectContaining({ err: expect.any(Error) }), expect.any(String));
  expect(existsSync(`${broken}.page-size`)).toBe(false);
  const still = new Database(broken, { readonly: true });
  expect(still.pragma('page_size', { simple: true })).toBe(4096);
  still.close();
});

test('with another connection open (a command-line tool beside the starting box) it waits for another start', () => {
  const file = oldBoxDatabase('shared.db');
  const other = new Database(file);
  const reading = other.prepare('SELECT key FROM meta').iterate();
  reading.next(); // a read transaction held open
  const log = quietLog();
  expect(convertPageSize(file, log as unknown as Logger)).toBe(false);
  expect(log.warn).toHaveBeenCalledWith(
    expect.objectContaining({ err: expect.objectContaining({ code: 'SQLITE_BUSY' }) }),
    expect.any(String),
  );
  expect(existsSync(`${file}.page-size`)).toBe(false);
  reading.return?.();
  other.close();
  expect(pageSizeOf(file)).toBe(4096);
  expect(convertPageSize(file, quietLog() as unknown as Logger)).toBe(true);
  expect(pageSizeOf(file)).toBe(PAGE_SIZE);
});

function writeFileSyncEmpty(path: string): void {
  closeSync(openSync(path, 'w'));
}
