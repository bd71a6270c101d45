import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { FRAME_HEADER_BYTES, frameOffset, type WalCursor } from './wal-format.js';

/**
 * The primary's database as of a WAL position, page by page, for a standby that starts from nothing or from a
 * position the WAL no longer holds (docs/architecture.md "A standby box"): each page is the last frame of the
 * current WAL up to `upTo` that holds it, or else the database file's. That is what SQLite itself reads at that
 * snapshot, so the copy is page for page the primary's database, and the frames after `upTo` apply to it. The
 * caller keeps checkpoints from writing into the database file and the WAL from restarting until the last page
 * is read (src/modules/standby/primary.ts).
 */
export function openSnapshot(
  dbFile: string,
  walFile: string,
  upTo: WalCursor | undefined,
  dbPages: number | undefined,
) {
  const dbFd = openSync(dbFile, 'r');
  const walFd = upTo && upTo.frames > 0 ? openSync(walFile, 'r') : undefined;
  const pageSize = upTo?.header.pageSize ?? pageSizeOfFile(dbFd);
  /** Page number -> offset of its last frame up to upTo in the WAL. */
  const inWal = new Map<number, number>();
  if (walFd !== undefined && upTo) {
    const head = Buffer.alloc(4);
    for (let i = 0; i < upTo.frames; i++) {
      readSync(walFd, head, 0, 4, frameOffset(pageSize, i));
      inWal.set(head.readUInt32BE(0), frameOffset(pageSize, i));
    }
  }
  const frame = Buffer.alloc(FRAME_HEADER_BYTES + pageSize);
  const pages = dbPages ?? Math.floor(fstatSync(dbFd).size / pageSize);
  let next = 1;
  return {
    pageSize,
    pages,
    /** The next `count` pages (fewer at the end; empty when done). */
    read(count: number): Buffer {
      const n = Math.min(count, pages - next + 1);
      if (n <= 0) return Buffer.alloc(0);
      const out = Buffer.alloc(n * pageSize);
      for (let k = 0; k < n; k++, next++) {
        const at = inWal.get(next);
        let got: number;
        if (at !== undefined) {
          // The frame must still be the snapshot's generation of the WAL: a restart would have overwritten it.
          readSync(walFd!, frame, 0, frame.length, at);
          if (frame.readUInt32BE(8) !== upTo!.header.salt1 || frame.readUInt32BE(12) !== upTo!.header.salt2)
            throw new Error('the WAL restarted while the snapshot was read');
          got = frame.copy(out, k * pageSize, FRAME_HEADER_BYTES);
        } else got = readSync(dbFd, out, k * pageSize, pageSize, (next - 1) * pageSize);
        // A page past the database file's end that no frame holds yet reads as zeros (SQLite's own view of it).
        if (got < pageSize) out.fill(0, k * pageSize + got, (k + 1) * pageSize);
      }
      return out;
    },
    close(): void {
      closeSync(dbFd);
      if (walFd !== undefined) closeSync(walFd);
    },
  };
}

/** The page size in a database file's header (offset 16, big-endian; 1 means 65536). */
function pageSizeOfFile(fd: number): number {
  const buf = Buffer.alloc(2);
  readSync(fd, buf, 0, 2, 16);
  const size = buf.readUInt16BE(0);
  return size === 1 ? 65536 : size || 4096;
}
