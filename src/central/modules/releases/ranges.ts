/**
 * The byte ranges of release uploads and downloads (docs/sync.md "Releases and rollouts"): pure parsing, so the
 * routes stay thin and every malformed header is a 4xx, never a 5xx.
 */

/** Bytes one download request may ask for: a box resumes in pieces, and a reply never holds more in memory. */
export const MAX_RANGE_BYTES = 8 * 1024 * 1024;

/** An upload piece's place: `Content-Range: bytes A-B/TOTAL` (RFC 9110 14.4), both ends inclusive. */
export interface ContentRange {
  start: number;
  end: number;
  total: number;
}

const DIGITS = '(\\d{1,15})';
const CONTENT_RANGE = new RegExp(`^bytes ${DIGITS}-${DIGITS}/${DIGITS}$`);
const RANGE = new RegExp(`^bytes=${DIGITS}-${DIGITS}$`);

/** The range of an upload piece, or a sentence saying what is wrong with the header. */
export function parseContentRange(header: string | undefined): ContentRange | string {
  const m = CONTENT_RANGE.exec((header ?? '').trim());
  if (!m) return 'Content-Range must be `bytes A-B/TOTAL`';
  const [start, end, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (end < start) return 'Content-Range must not end before it starts';
  if (end >= total) return 'Content-Range must end before TOTAL';
  return { start, end, total };
}

/** What a download asked for: the bytes to send, or why it cannot be served (a 416). */
export type RangeAnswer = { start: number; end: number } | { refused: string };

/**
 * `Range: bytes=A-B` over a blob of `size` bytes: required, one range, both ends given, at most MAX_RANGE_BYTES as
 * asked, starting inside the blob; an end past the last byte is held to it (RFC 9110 14.1.2).
 */
export function parseRange(header: string | undefined, size: number): RangeAnswer {
  const rule = `send Range: bytes=A-B, at most ${MAX_RANGE_BYTES} bytes (8 MiB) a request`;
  if (header === undefined) return { refused: `a Range header is required: ${rule}` };
  const m = RANGE.exec(header.trim());
  if (!m) return { refused: `the Range is not one range of bytes: ${rule}` };
  const start = Number(m[1]);
  const asked = Number(m[2]);
  if (asked < start) return { refused: `the Range ends before it starts: ${rule}` };
  if (asked - start + 1 > MAX_RANGE_BYTES) return { refused: `the Range asks for ${asked - start + 1} bytes: ${rule}` };
  if (start >= size) return { refused: `the Range starts past the last byte (the size is ${size})` };
  return { start, end: Math.min(asked, size - 1) };
}
