/**
 * How a venue box and the central node talk (docs/sync.md "Sync to the central node"): the versions, limits and
 * paths, the envelope's text, the hash chain, the batch on the wire and the bytes that are signed. The messages
 * themselves (envelope, event bodies, header, answers) are schemas in src/shared/sync-messages.ts. Both sides
 * import these two files and nothing else of each other.
 */
import { createHash, randomBytes, verify } from 'node:crypto';
import { verifyKeyOf } from './ed25519.js';
import type { ErrorCode, SyncErrorCode } from './errors.js';
import { type BatchHeader, type Envelope, ENVELOPE_KINDS, problemOf, SYNC_CHECKS } from './sync-messages.js';

/**
 * The wire protocol (batch framing, headers, answers). A central answers 426 to one it does not speak. 2: signed
 * requests carry a timestamp and a nonce (docs/sync.md "Signed requests"); a central refuses a box of 1 with 426.
 */
export const PROTOCOL = 2;
/** The version of the event bodies; a central answers 426 to a batch whose schema is newer than it knows. */
export const SCHEMA = 1;

/**
 * A batch holds at most this many events and bytes of events; one larger event travels alone. A central refuses
 * more events (frame.ts) but takes any bytes up to MAX_REQUEST_BYTES, so the byte limit is the box's alone: 1 MiB
 * (was 256 KiB) carries a busy day's large orders about 330 a batch (docs/performance.md "Draining a busy day at
 * 5,000 events/s").
 */
export const MAX_BATCH_EVENTS = 500;
export const MAX_BATCH_BYTES = 1024 * 1024;
/** No single event may be larger (a 2048-item stock document with its ledger is about 600 KB). */
export const MAX_EVENT_BYTES = 3 * 1024 * 1024;
/** The central refuses (413) a request body larger than this. */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

/** The chain's value before the first event of a device. */
export const GENESIS_HASH = '0'.repeat(64);

/** HTTP paths on the central. */
export const PATHS = {
  enrol: '/sync-api/api/enrol',
  hello: '/sync-api/api/hello',
  batches: '/sync-api/api/batches',
  /** The device's own events after `?after=SEQ` (`&limit=N`), for a box restored from an old copy. */
  events: '/sync-api/api/events',
  /** The tenant's catalogue after `?after=REV` (`&wait=S` long poll, `&snapshot=1`): src/shared/catalogue-protocol.ts. */
  catalogue: '/sync-api/api/catalogue',
  /** A standby pair's lease (signed): docs/sync.md "The standby lease". */
  standbyLease: '/sync-api/api/standby/lease',
} as const;

/**
 * How long a standby lease the central grants lasts, from its answer (docs/sync.md "The standby lease"). The primary
 * renews well within it; the standby may claim the next term once it has passed unrenewed. `central serve
 * --standby-lease-ms` sets another (tests use a shorter one); every answer names the one in force (`ttlMs`).
 */
export const LEASE_TTL_MS = 5000;

/** Media type of a batch: newline-delimited; line 1 the header, line 2 the signature, then one event a line. */
export const BATCH_MEDIA_TYPE = 'application/x-ndjson';

// ---------------------------------------------------------------------------------------------- events

/**
 * The envelope's text; `bodyJson` may be a JSON text built already (the order the socket pushes). A kind the
 * protocol does not know (a test's poison event) gets no stream.
 */
export function envelopeText(e: Omit<Envelope, 'body' | 'stream' | 'schema'>, bodyJson: string): string {
  const head = JSON.stringify({
    eventId: e.eventId,
    tenant: e.tenant,
    stream: ENVELOPE_KINDS[e.kind],
    aggregate: e.aggregate,
    kind: e.kind,
    schema: SCHEMA,
    boxTime: e.boxTime,
  });
  return `${head.slice(0, -1)},"body":${bodyJson}}`;
}

/** chain(n) = sha256(chain(n-1) as 32 bytes || the event's text as UTF-8), in hex. */
export function chainHash(prevHex: string, envelope: string): string {
  return createHash('sha256').update(Buffer.from(prevHex, 'hex')).update(envelope, 'utf8').digest('hex');
}

/** The chain after `envelopes`, starting from `prevHex`. */
export function chainOf(prevHex: string, envelopes: string[]): string {
  let hash = prevHex;
  for (const e of envelopes) hash = chainHash(hash, e);
  return hash;
}

// --------------------------------------------------------------------------------------------- batches

/** The batch as bytes: header line, signature line (base64), one line per event (JSON text has no raw newline). */
export function encodeBatch(headerText: string, signature: Uint8Array, envelopes: string[]): Buffer {
  return Buffer.concat(batchParts(headerText, signature, [Buffer.from(envelopes.join('\n'), 'utf8')]));
}

/**
 * The same bytes as `encodeBatch`, as parts to write one after another: `eventChunks` are runs of envelopes,
 * each already joined by newlines and encoded (a sender encodes a few dozen at a time, never the whole batch).
 */
export function batchParts(headerText: string, signature: Uint8Array, eventChunks: Buffer[]): Buffer[] {
  const parts: Buffer[] = [Buffer.from(`${headerText}\n${Buffer.from(signature).toString('base64')}\n`, 'utf8')];
  eventChunks.forEach((chunk, i) => {
    if (i > 0) parts.push(NEWLINE);
    parts.push(chunk);
  });
  return parts;
}
const NEWLINE = Buffer.from('\n');

export interface DecodedBatch {
  headerText: string;
  header: BatchHeader;
  signature: Buffer;
  envelopes: string[];
}

export class BatchFormatError extends Error {}

/** Splits a received batch back into its parts; throws BatchFormatError when it is not one. */
export function decodeBatch(bytes: Buffer): DecodedBatch {
  const lines = bytes.toString('utf8').split('\n');
  if (lines.length < 3)
    throw new BatchFormatError('a batch has a header line, a signature line and at least one event');
  const [headerText, signatureText, ...envelopes] = lines as [string, string, ...string[]];
  let header: unknown;
  try {
    header = JSON.parse(headerText);
  } catch {
    throw new BatchFormatError('the header line is not JSON');
  }
  const problem = headerProblem(header);
  if (problem) throw new BatchFormatError(`header: ${problem}`);
  if (!/^[A-Za-z0-9+/]{86}==$/.test(signatureText))
    throw new BatchFormatError('the signature line is not a base64 Ed25519 signature');
  return { headerText, header: header as BatchHeader, signature: Buffer.from(signatureText, 'base64'), envelopes };
}

function headerProblem(h: unknown): string | undefined {
  if (typeof h !== 'object' || h === null || Array.isArray(h)) return 'not an object';
  const problem = problemOf(SYNC_CHECKS.header, h);
  if (problem) return problem;
  const { firstSeq, lastSeq } = h as BatchHeader;
  if (lastSeq < firstSeq) return 'firstSeq..lastSeq is not a range from 1';
  return undefined;
}

// ---------------------------------------------------------------------------------------------- keys

/** A device's key id: the first 16 hex digits of sha256(public key). */
export const keyIdOf = (publicKey: Uint8Array): string =>
  createHash('sha256').update(publicKey).digest('hex').slice(0, 16);

/** Signs natively, the same bytes as tweetnacl (src/shared/ed25519.ts). */
export { signDetached } from './ed25519.js';

/** Verifies with node:crypto, which checks the same Ed25519 signatures natively, far faster than pure JS. */
export function verifyDetached(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  return verify(null, message, verifyKeyOf(publicKey), signature);
}

// ------------------------------------------------------------------------------------ signed requests

/**
 * Hello, the tail fetch, the catalogue's poll, menu images, release downloads and the standby lease are plain
 * requests signed by the device (docs/sync.md "Signed requests"): headers `x-tenant`, `x-device`, `x-timestamp`
 * (the box's clock, ms), `x-nonce` (random, once) and `x-signature` (base64), the signature over this text. A
 * hello the central refused as stale is sent again with `x-challenge`, the central's one-time answer, signed too.
 */
export const requestSigningText = (
  method: string,
  pathAndQuery: string,
  tenant: string,
  deviceId: string,
  body: string,
  /** Null: a box of protocol 1, which signed no stamp (a central started with --accept-protocol-1 takes it). */
  stamp: RequestStamp | null,
): string =>
  `${method.toUpperCase()} ${pathAndQuery}\n${tenant}\n${deviceId}\n${createHash('sha256').update(body, 'utf8').digest('hex')}` +
  (stamp ? `\n${stamp.timestampMs}\n${stamp.nonce}${stamp.challenge ? `\n${stamp.challenge}` : ''}` : '');

/** What makes a signed request once-only: when the box signed it, a nonce, and a hello's challenge if it was asked. */
export interface RequestStamp {
  timestampMs: number;
  nonce: string;
  challenge?: string;
}

/**
 * A signed request is taken when its timestamp is within this of the central's clock moved by the offset of the
 * device's last hello, and its nonce was not seen in twice this (docs/sync.md "Signed requests").
 */
export const REQUEST_WINDOW_MS = 5 * 60_000;

/** A nonce and a challenge: 16 random bytes, base64url (22 characters). */
export const newNonce = (): string => randomBytes(16).toString('base64url');
export const NONCE_PATTERN = /^[A-Za-z0-9_-]{22}$/;
/** Milliseconds since 1970 on the box's clock: a box whose clock lost its setting says 0 and up. */
export const TIMESTAMP_PATTERN = /^\d{1,15}$/;

/** The headers of a signed request (`x-challenge` only in a hello sent again with one). */
export interface SignedRequestHeaders extends Record<string, string> {
  'x-tenant': string;
  'x-device': string;
  'x-timestamp': string;
  'x-nonce': string;
  'x-signature': string;
}

/** The headers of a signed request, its stamp taken at `timestampMs`. */
export async function signRequest(
  request: { method: string; pathAndQuery: string; tenant: string; deviceId: string; body: string },
  sign: (message: Uint8Array) => Uint8Array | Promise<Uint8Array>,
  timestampMs: number,
  challenge?: string,
): Promise<SignedRequestHeaders> {
  const stamp: RequestStamp = { timestampMs: Math.trunc(timestampMs), nonce: newNonce(), challenge };
  const { method, pathAndQuery, tenant, deviceId, body } = request;
  const text = requestSigningText(method, pathAndQuery, tenant, deviceId, body, stamp);
  const signature = await sign(Buffer.from(text, 'utf8'));
  return {
    'x-tenant': tenant,
    'x-device': deviceId,
    'x-timestamp': String(stamp.timestampMs),
    'x-nonce': stamp.nonce,
    ...(challenge ? { 'x-challenge': challenge } : {}),
    'x-signature': Buffer.from(signature).toString('base64'),
  };
}

/**
 * Why a central refuses a request (the `code` of its error body): the sync codes of the catalogue
 * (src/shared/errors.ts, SYNC_ERRORS: syncGap, syncDiverged, invalidBatch, unsupportedProtocol,
 * requestStale, requestReplayed), and of the API's
 * codes 401 `unauthorized` (unknown or revoked device, unknown key id, a bad signature), 413 `payloadTooLarge`
 * (larger than MAX_REQUEST_BYTES) and 429 `tooManyRequests` (too many boxes at once; Retry-After). A 409 body also
 * carries `expectedSeq` and `head`, so the box knows where to resume.
 */
export type SyncRejection = SyncErrorCode | Extract<ErrorCode, 'unauthorized' | 'payloadTooLarge' | 'tooManyRequests'>;
