/**
 * SQLite's WAL file format (https://sqlite.org/walformat.html), as far as replication needs it: the 32-byte header,
 * frames of a 24-byte header and one page, and the cumulative checksum that tells a committed frame from a torn
 * or stale one. The primary reads whole transactions out of its WAL (src/modules/standby/wal-reader.ts); the
 * standby writes them into a WAL of its own (src/modules/standby/replica-wal.ts), so that SQLite's own recovery
 * gives it a consistent database after any crash (docs/architecture.md "A standby box").
 */

export const WAL_HEADER_BYTES = 32;
export const FRAME_HEADER_BYTES = 24;
/** Magic with checksums over little-endian words; +1 means big-endian words. */
const MAGIC_LE = 0x377f0682;
const WAL_FORMAT_VERSION = 3007000;

export interface WalHeader {
  /** Checksums read 32-bit words big-endian (magic 0x377f0683) or little-endian (0x377f0682). */
  bigEndian: boolean;
  pageSize: number;
  checkpointSeq: number;
  salt1: number;
  salt2: number;
  /** The header's own checksum: the seed of the first frame's. */
  cksum1: number;
  cksum2: number;
}

/** One page of a transaction, as SQLite wrote it to the WAL. */
export interface Page {
  pgno: number;
  data: Buffer;
}

/** A committed transaction: its pages in WAL order, and the database's size in pages after it. */
export interface Transaction {
  pages: Page[];
  dbPages: number;
}

/**
 * SQLite's checksum: over pairs of 32-bit words, s0 += x[i] + s1; s1 += x[i+1] + s0, modulo 2^32, seeded by the
 * previous checksum. `buf`'s length is a multiple of 8.
 */
export function walChecksum(buf: Buffer, bigEndian: boolean, s0: number, s1: number): [number, number] {
  let a = s0 >>> 0;
  let b = s1 >>> 0;
  const n = buf.length;
  if (bigEndian) {
    for (let i = 0; i < n; i += 8) {
      a = (a + buf.readUInt32BE(i) + b) >>> 0;
      b = (b + buf.readUInt32BE(i + 4) + a) >>> 0;
    }
  } else {
    for (let i = 0; i < n; i += 8) {
      a = (a + buf.readUInt32LE(i) + b) >>> 0;
      b = (b + buf.readUInt32LE(i + 4) + a) >>> 0;
    }
  }
  return [a, b];
}

/** The header at the start of `buf`, or undefined if it is not a valid one (no WAL yet, or a torn write). */
export function parseWalHeader(buf: Buffer): WalHeader | undefined {
  if (buf.length < WAL_HEADER_BYTES) return undefined;
  const magic = buf.readUInt32BE(0);
  if ((magic & ~1) !== MAGIC_LE || buf.readUInt32BE(4) !== WAL_FORMAT_VERSION) return undefined;
  const bigEndian = (magic & 1) === 1;
  const [c1, c2] = walChecksum(buf.subarray(0, 24), bigEndian, 0, 0);
  if (c1 !== buf.readUInt32BE(24) || c2 !== buf.readUInt32BE(28)) return undefined;
  const size = buf.readUInt32BE(8);
  return {
    bigEndian,
    pageSize: size === 1 ? 65536 : size,
    checkpointSeq: buf.readUInt32BE(12),
    salt1: buf.readUInt32BE(16),
    salt2: buf.readUInt32BE(20),
    cksum1: c1,
    cksum2: c2,
  };
}

/** A new WAL header with these salts (little-endian checksums, as SQLite writes on the machines the box runs on). */
export function encodeWalHeader(pageSize: number, checkpointSeq: number, salt1: number, salt2: number): Buffer {
  const buf = Buffer.alloc(WAL_HEADER_BYTES);
  buf.writeUInt32BE(MAGIC_LE, 0);
  buf.writeUInt32BE(WAL_FORMAT_VERSION, 4);
  buf.writeUInt32BE(pageSize === 65536 ? 1 : pageSize, 8);
  buf.writeUInt32BE(checkpointSeq >>> 0, 12);
  buf.writeUInt32BE(salt1 >>> 0, 16);
  buf.writeUInt32BE(salt2 >>> 0, 20);
  const [c1, c2] = walChecksum(buf.subarray(0, 24), false, 0, 0);
  buf.writeUInt32BE(c1, 24);
  buf.writeUInt32BE(c2, 28);
  return buf;
}

/** Where a reader or writer stands in one WAL: the frames after the header, and the running checksum. */
export interface WalCursor {
  header: WalHeader;
  /** Frames counted so far (the next frame's index). */
  frames: number;
  cksum1: number;
  cksum2: number;
}

export const cursorAtStart = (header: WalHeader): WalCursor => ({
  header,
  frames: 0,
  cksum1: header.cksum1,
  cksum2: header.cksum2,
});

/** Byte offset of frame `index` (0-based) in a WAL of this page size. */
export const frameOffset = (pageSize: number, index: number): number =>
  WAL_HEADER_BYTES + index * (FRAME_HEADER_BYTES + pageSize);

/**
 * Checks the frame in `frame` (header and page) against the cursor: its salts are the header's and its checksum
 * continues the running one. Returns the frame's page number, its commit size (0 inside a transaction) and the
 * checksum after it, or undefined: the end of the valid WAL.
 */
export function checkFrame(
  cursor: { header: WalHeader; cksum1: number; cksum2: number },
  frame: Buffer,
): { pgno: number; commit: number; cksum1: number; cksum2: number } | undefined {
  const { header } = cursor;
  if (frame.readUInt32BE(8) !== header.salt1 || frame.readUInt32BE(12) !== header.salt2) return undefined;
  let [c1, c2] = walChecksum(frame.subarray(0, 8), header.bigEndian, cursor.cksum1, cursor.cksum2);
  [c1, c2] = walChecksum(frame.subarray(FRAME_HEADER_BYTES), header.bigEndian, c1, c2);
  if (c1 !== frame.readUInt32BE(16) || c2 !== frame.readUInt32BE(20)) return undefined;
  return { pgno: frame.readUInt32BE(0), commit: frame.readUInt32BE(4), cksum1: c1, cksum2: c2 };
}

/**
 * The frames of `tx` encoded for the WAL at `cursor` (its salts, its running checksum; the last frame carries the
 * commit size), and the cursor after them.
 */
export function encodeFrames(cursor: WalCursor, tx: Transaction): { bytes: Buffer; after: WalCursor } {
  const { header } = cursor;
  const frameBytes = FRAME_HEADER_BYTES + header.pageSize;
  const bytes = Buffer.alloc(tx.pages.length * frameBytes);
  let c1 = cursor.cksum1;
  let c2 = cursor.cksum2;
  tx.pages.forEach((page, i) => {
    if (page.data.length !== header.pageSize) throw new Error(`page ${page.pgno} is not ${header.pageSize} bytes`);
    const frame = bytes.subarray(i * frameBytes, (i + 1) * frameBytes);
    frame.writeUInt32BE(page.pgno, 0);
    frame.writeUInt32BE(i === tx.pages.length - 1 ? tx.dbPages : 0, 4);
    frame.writeUInt32BE(header.salt1, 8);
    frame.writeUInt32BE(header.salt2, 12);
    page.data.copy(frame, FRAME_HEADER_BYTES);
    [c1, c2] = walChecksum(frame.subarray(0, 8), header.bigEndian, c1, c2);
    [c1, c2] = walChecksum(frame.subarray(FRAME_HEADER_BYTES), header.bigEndian, c1, c2);
    frame.writeUInt32BE(c1, 16);
    frame.writeUInt32BE(c2, 20);
  });
  return { bytes, after: { header, frames: cursor.frames + tx.pages.length, cksum1: c1, cksum2: c2 } };
}
