import { AppError } from '../../../shared/errors.js';
import { BatchHeader } from '../../../shared/sync-messages.js';
import {
  BatchFormatError,
  type DecodedBatch,
  decodeBatch,
  MAX_BATCH_EVENTS,
  MAX_EVENT_BYTES,
  PROTOCOL,
  SCHEMA,
} from '../../../shared/sync-protocol.js';

/** A real header is about 400 bytes; the cap keeps a signed header from carrying megabytes of anything. */
export const MAX_HEADER_BYTES = 4096;
/** `sync_events.epoch` and `devices.head_epoch` are `integer`: a box opens one epoch per restore, so 2^31 - 1 is ample. */
export const MAX_EPOCH = 2 ** 31 - 1;

/** The header's fields as its schema declares them (src/shared/sync-messages.ts); any other is refused (a new one is a new protocol). */
const HEADER_FIELDS = new Set(Object.keys(BatchHeader.properties));
const NEWLINE = 0x0a;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const invalidBatch = (message: string): AppError => AppError.of('invalidBatch', message);

/**
 * The batch's framing, checked with no database and bounded work: byte checks first (header line length, event
 * count by counting at most MAX_BATCH_EVENTS + 2 newlines, no raw NUL, valid UTF-8), then the protocol file's
 * decoding, then what the central's columns and rules need of the header. Everything here is a 400, except a
 * protocol or schema this central does not know (426, the box keeps its queue).
 */
export function readBatch(bytes: Buffer): DecodedBatch {
  const headerEnd = bytes.indexOf(NEWLINE);
  if (headerEnd > MAX_HEADER_BYTES || (headerEnd < 0 && bytes.length > MAX_HEADER_BYTES)) {
    throw invalidBatch(`the header line is longer than ${MAX_HEADER_BYTES} bytes`);
  }
  let lines = 1;
  for (let at = headerEnd; at >= 0; at = bytes.indexOf(NEWLINE, at + 1)) {
    if (++lines > MAX_BATCH_EVENTS + 2) throw invalidBatch(`a batch holds at most ${MAX_BATCH_EVENTS} events`);
  }
  // A box's JSON never holds a raw NUL (JSON.stringify escapes it), and PostgreSQL's text cannot store one.
  if (bytes.includes(0)) throw invalidBatch('a batch never holds a raw NUL character (U+0000)');
  // The signature and the chain cover the text; only valid UTF-8 decodes to exactly one text.
  try {
    utf8.decode(bytes);
  } catch {
    throw invalidBatch('the batch is not valid UTF-8');
  }
  let batch: DecodedBatch;
  try {
    batch = decodeBatch(bytes);
  } catch (err) {
    if (err instanceof BatchFormatError) throw invalidBatch(err.message);
    throw err;
  }
  const h = batch.header;
  if (h.protocol !== PROTOCOL || h.schema > SCHEMA) {
    throw AppError.of('unsupportedProtocol', `this central speaks protocol ${PROTOCOL}, schema up to ${SCHEMA}`);
  }
  const unknown = Object.keys(h).find((key) => !HEADER_FIELDS.has(key));
  if (unknown !== undefined) throw invalidBatch(`header: unknown field ${unknown.slice(0, 64)}`);
  if (h.schema < 1) throw invalidBatch('header: schema starts at 1');
  if (h.epoch > MAX_EPOCH) throw invalidBatch(`header: epoch must be at most ${MAX_EPOCH}`);
  const named = h.lastSeq - h.firstSeq + 1;
  if (named > MAX_BATCH_EVENTS) throw invalidBatch(`header: a batch holds at most ${MAX_BATCH_EVENTS} events`);
  if (batch.envelopes.length !== named) {
    throw invalidBatch(`the header names ${named} events, the batch holds ${batch.envelopes.length}`);
  }
  const big = batch.envelopes.findIndex((e) => Buffer.byteLength(e, 'utf8') > MAX_EVENT_BYTES);
  if (big >= 0) throw invalidBatch(`event ${h.firstSeq + big} is larger than ${MAX_EVENT_BYTES} bytes`);
  return batch;
}
