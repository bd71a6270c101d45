import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import {
  type WalHeader,
  checkFrame,
  cursorAtStart,
  FRAME_HEADER_BYTES,
  frameOffset,
  type Page,
  parseWalHeader,
  type Transaction,
  WAL_HEADER_BYTES,
  type WalCursor,
} from './wal-format.js';

/** Frames read from the WAL at a time (about 66 KB with 1 KiB pages). */
const CHUNK_FRAMES = 64;

/** What one read of the WAL found after the cursor. */
export interface WalRead {
  /** Whole transactions committed after the cursor, in commit order. */
  transactions: Transaction[];
  /** The WAL restarted (new salts) since the cursor: `transactions` are the new generation's. */
  restarted: boolean;
  /** The cursor after the last whole transaction (unchanged when there was none). */
  cursor: WalCursor | undefined;
  /** The cursor after each of `transactions`. */
  ends: WalCursor[];
}

/**
 * Reads the committed transactions the primary's WAL holds after a cursor: frames whose salts are the header's
 * and whose checksums continue the chain, up to the last frame that ends a transaction. Frames after it belong to
 * a transaction still being written, or to an older generation of the WAL: SQLite's own rule for what is
 * committed (https://sqlite.org/walformat.html). The caller keeps the WAL from restarting past frames it has not
 * read (src/modules/standby/wal-pin.ts).
 */
export function createWalReader(walFile: string) {
  let fd: number | undefined;
  const open = (): number | undefined => {
    if (fd !== undefined) return fd;
    try {
      fd = openSync(walFile, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    return fd;
  };
  return {
    /** The transactions after `from` (undefined: from the start of the WAL as it is now). */
    read(from: WalCursor | undefined): WalRead {
      const handle = open();
      if (handle === undefined) return { transactions: [], restarted: false, cursor: from, ends: [] };
      const head = Buffer.alloc(WAL_HEADER_BYTES);
      if (readSync(handle, head, 0, WAL_HEADER_BYTES, 0) < WAL_HEADER_BYTES) {
        return { transactions: [], restarted: false, cursor: from, ends: [] };
      }
      const header = parseWalHeader(head);
      if (!header) return { transactions: [], restarted: false, cursor: from, ends: [] };
      const sameGeneration =
        from !== undefined && from.header.salt1 === header.salt1 && from.header.salt2 === header.salt2;
      const start = sameGeneration ? from : cursorAtStart(header);
      const restarted = from !== undefined && !sameGeneration;
      const frameBytes = FRAME_HEADER_BYTES + header.pageSize;
      const size = fstatSync(handle).size;
      const transactions: Transaction[] = [];
      const ends: WalCursor[] = [];
      let committed = start;
      let running = { header, cksum1: start.cksum1, cksum2: start.cksum2 };
      let pages: Page[] = [];
      // In chunks, to the first frame that is not this WAL's: after a restart the file keeps an older generation's
      // frames past the new end (up to journal_size_limit), which one read to the file's end would copy each time.
      let index = start.frames;
      for (let valid = true; valid; ) {
        const begin = frameOffset(header.pageSize, index);
        const whole = Math.min(CHUNK_FRAMES, Math.floor(Math.max(0, size - begin) / frameBytes));
        if (whole === 0) break;
        const buf = Buffer.allocUnsafe(whole * frameBytes);
        const got = Math.floor(readSync(handle, buf, 0, buf.length, begin) / frameBytes);
        for (let i = 0; i < got; i++, index++) {
          const frame = buf.subarray(i * frameBytes, (i + 1) * frameBytes);
          const checked = checkFrame(running, frame);
          if (!checked) {
            valid = false;
            break;
          }
          running = { header, cksum1: checked.cksum1, cksum2: checked.cksum2 };
          // A copy: a page outlives the read buffer in the send queue.
          pages.push({ pgno: checked.pgno, data: Buffer.from(frame.subarray(FRAME_HEADER_BYTES)) });
          if (checked.commit === 0) continue;
          transactions.push({ pages, dbPages: checked.commit });
          pages = [];
          committed = { header, frames: index + 1, cksum1: checked.cksum1, cksum2: checked.cksum2 };
          ends.push(committed);
        }
        if (got < whole) break;
      }
      return { transactions, restarted, cursor: committed, ends };
    },
    /**
     * The cursor after the first `frames` frames of the WAL with this header, if they end a transaction there;
     * undefined if not (or the WAL is another one now). A standby resumes only from such a boundary.
     */
    cursorAt(header: WalHeader, frames: number): WalCursor | undefined {
      const start = cursorAtStart(header);
      if (frames === 0) return start;
      const read = this.read(start);
      if (read.restarted) return undefined;
      return read.ends.find((end) => end.frames === frames);
    },
    close(): void {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
