import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import Database from 'better-sqlite3';
import { betterSqliteOptions } from '../../native/addons.js';
import {
  cursorAtStart,
  encodeFrames,
  encodeWalHeader,
  parseWalHeader,
  type Transaction,
  type WalCursor,
} from './wal-format.js';

/**
 * The standby's copy of the primary's database: the database file and a WAL the standby writes itself, frame by
 * frame, in SQLite's own format with its own salts and checksums (docs/architecture.md "A standby box"). A
 * transaction is durable once its frames and their fsync are done; a crash in the middle of an append leaves a
 * torn last transaction that SQLite's recovery ignores (its checksum breaks the chain), so the copy opened after
 * any crash is the primary's database as of a transaction it committed. No SQLite connection is open while frames
 * are appended: SQLite would not see them (its WAL index is its own) and could restart the WAL over them.
 */
export function createReplicaWal(dbFile: string, pageSize: number) {
  const walFile = `${dbFile}-wal`;
  let fd: number | undefined;
  let cursor: WalCursor | undefined;
  let bytes = 0;

  /** Copies the WAL back into the database file through SQLite (recovery, then a TRUNCATE checkpoint), closes. */
  const checkpoint = (): void => {
    close();
    if (!existsSync(dbFile)) return;
    const db = new Database(dbFile, betterSqliteOptions());
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
    // SQLite removes both once the last connection has checkpointed; a WAL it kept would be replayed again.
    rmSync(walFile, { force: true });
    rmSync(`${dbFile}-shm`, { force: true });
  };

  /** A fresh WAL: new salts, so no frame of an older one can pass for part of it. */
  const begin = (): void => {
    const header = encodeWalHeader(pageSize, 0, randomBytes(4).readUInt32BE(0), randomBytes(4).readUInt32BE(0));
    fd = openSync(walFile, 'w', 0o600);
    writeSync(fd, header, 0, header.length, 0);
    fdatasyncSync(fd);
    cursor = cursorAtStart(parseWalHeader(header)!);
    bytes = header.length;
  };

  function close(): void {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    cursor = undefined;
  }

  return {
    /** Appends whole transactions and fsyncs once: when this returns they survive a power cut. */
    append(transactions: Transaction[]): void {
      if (transactions.length === 0) return;
      if (fd === undefined) {
        checkpoint();
        begin();
      }
      const chunks: Buffer[] = [];
      for (const tx of transactions) {
        const encoded = encodeFrames(cursor!, tx);
        chunks.push(encoded.bytes);
        cursor = encoded.after;
      }
      const all = Buffer.concat(chunks);
      let at = 0;
      while (at < all.length) at += writeSync(fd!, all, at, all.length - at, bytes + at);
      bytes += all.length;
      fdatasyncSync(fd!);
    },
    /** Bytes in the WAL: the follower checkpoints it once this passes its limit. */
    walBytes: () => bytes,
    /** Everything into the database file; the next append starts a new WAL. */
    checkpoint,
    close,
  };
}
export type ReplicaWal = ReturnType<typeof createReplicaWal>;
