import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fdatasync, fdatasyncSync, openSync, rmSync, write, writeSync } from 'node:fs';
import { promisify } from 'node:util';
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
      const [r] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number; checkpointed: number }[];
      // Another connection held it back (a command run beside the standby): the WAL is kept, frames and all.
      if (r!.busy !== 0 || r!.checkpointed < r!.log) throw new Error('the standby could not copy its WAL back');
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

  /** The frames of `transactions` after the WAL's end, and where they go; the cursor moves past them. */
  const encode = (transactions: Transaction[]): { all: Buffer; at: number } => {
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
    const at = bytes;
    bytes += all.length;
    return { all, at };
  };

  return {
    /**
     * Appends whole transactions and fsyncs once, off the event loop (the write and its fsync on libuv's pool), so
     * that what arrives meanwhile is appended together next: once it resolves they survive a power cut. One at a time; after a failure the caller closes this
     * WAL, and the next append starts a new one after SQLite's recovery drops the torn end.
     */
    async appendAsync(transactions: Transaction[]): Promise<void> {
      if (transactions.length === 0) return;
      const { all, at } = encode(transactions);
      const handle = fd!;
      let done = 0;
      while (done < all.length)
        done += (await writeAsync(handle, all, done, all.length - done, at + done)).bytesWritten;
      await fdatasyncAsync(handle);
    },
    /** Bytes in the WAL: the follower checkpoints it once this passes its limit. */
    walBytes: () => bytes,
    /** Everything into the database file; the next append starts a new WAL. */
    checkpoint,
    close,
  };
}
export type ReplicaWal = ReturnType<typeof createReplicaWal>;

const writeAsync = promisify(write) as unknown as (
  fd: number,
  buffer: Buffer,
  offset: number,
  length: number,
  position: number,
) => Promise<{ bytesWritten: number }>;
const fdatasyncAsync = promisify(fdatasync);
