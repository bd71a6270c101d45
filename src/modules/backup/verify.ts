import { closeSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../db/migrate.js';
import { betterSqliteOptions } from '../../native/addons.js';
import { BACKUP_FORMAT, BACKUP_TABLE, BackupError, CARRIED_FILES } from './take.js';

export interface BackupInfo {
  file: string;
  bytes: number;
  takenAt: string;
  version: string;
  schemaVersion: number;
  dataDir: string;
  host: string;
  /** The carried files by name (the token signing key, the sync device identity when enrolled). */
  files: Map<string, Buffer>;
}

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Reads and checks a backup before anything uses it: an SQLite file, with the backup table of a known format,
 * only known key files (never a path: a name from the file never reaches the file system unchecked), a schema
 * this program can migrate, and `PRAGMA integrity_check` ok. Opened read-only: nothing is written beside it.
 */
export function readBackup(file: string): BackupInfo {
  // Not a usable venue-box backup: `venue-box restore` exits 65, EX_DATAERR (docs/operations.md "Exit codes").
  const notBackup = (why: string) => new BackupError(`${file} is not a venue-box backup: ${why}`, 'data');
  let bytes: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw notBackup('not a regular file');
    bytes = st.size;
  } catch (err) {
    if (err instanceof BackupError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new BackupError(`cannot read ${file}: ${code ?? String(err)}`, code === 'ENOENT' ? 'noInput' : 'io');
  }
  const head = Buffer.alloc(16);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  if (!head.equals(SQLITE_MAGIC)) throw notBackup('not an SQLite database');

  let db: Database.Database;
  try {
    db = new Database(file, { ...betterSqliteOptions(), readonly: true, fileMustExist: true });
  } catch (err) {
    throw notBackup(`SQLite cannot open it (${(err as { code?: string }).code ?? (err as Error).message})`);
  }
  try {
    let row: Record<string, unknown> | undefined;
    try {
      const hasTable = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(BACKUP_TABLE);
      if (!hasTable) {
        throw notBackup(
          `no ${BACKUP_TABLE} table (a copy of venue-box.db is not a backup: take one with 'venue-box backup now')`,
        );
      }
      row = db.prepare(`SELECT * FROM ${BACKUP_TABLE}`).get() as Record<string, unknown> | undefined;
    } catch (err) {
      if (err instanceof BackupError) throw err;
      throw notBackup(`it is damaged (${(err as { code?: string }).code ?? (err as Error).message})`);
    }
    if (!row) throw notBackup(`its ${BACKUP_TABLE} table is empty`);
    if (row.format !== BACKUP_FORMAT)
      throw notBackup(`backup format ${String(row.format)} is unknown to this venue-box`);
    const files = carriedFiles(row.files, notBackup);
    const check = db.pragma('integrity_check') as { integrity_check: string }[];
    if (check.length !== 1 || check[0]!.integrity_check !== 'ok') {
      throw notBackup(
        `it is damaged: PRAGMA integrity_check says ${check
          .slice(0, 3)
          .map((r) => r.integrity_check)
          .join('; ')}`,
      );
    }
    const schemaVersion = Number(row.schema_version);
    const latest = MIGRATIONS.at(-1)!.version;
    if (schemaVersion > latest) {
      throw new BackupError(
        `${file} was taken by a newer venue-box (${String(row.version)}, database schema ${schemaVersion}; ` +
          `this one knows up to ${latest}): restore it with that version`,
        'data',
      );
    }
    return {
      file,
      bytes,
      takenAt: String(row.taken_at),
      version: String(row.version),
      schemaVersion,
      dataDir: String(row.data_dir),
      host: String(row.host),
      files,
    };
  } finally {
    db.close();
  }
}

function carriedFiles(json: unknown, notBackup: (why: string) => Error): Map<string, Buffer> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(json));
  } catch {
    throw notBackup('its list of files is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw notBackup('its list of files is not an object');
  const files = new Map<string, Buffer>();
  for (const [name, content] of Object.entries(parsed)) {
    if (!(CARRIED_FILES as readonly string[]).includes(name))
      throw notBackup(`it carries an unknown file ${JSON.stringify(name)}`);
    if (typeof content !== 'string') throw notBackup(`its ${name} is not base64 text`);
    const data = Buffer.from(content, 'base64');
    try {
      const key = JSON.parse(data.toString('utf8')) as { secretKey?: unknown };
      if (typeof key.secretKey !== 'string') throw new Error('no secretKey');
    } catch {
      throw notBackup(`its ${name} is not a key file`);
    }
    files.set(name, data);
  }
  return files;
}
