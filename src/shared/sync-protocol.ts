/**
 * What a venue box and the central node say to each other (docs/sync.md "Sync to the central node"): the event
 * envelope and its kinds, the hash chain, the batch on the wire, the bytes that are signed, and the answers.
 * Both sides import this file and nothing else of each other.
 */
import { createHash, verify } from 'node:crypto';
import { verifyKeyOf } from './ed25519.js';
import type { ErrorCode, SyncErrorCode } from './errors.js';
import type { InboxResultBody } from './hq-inbox.js';

/** The wire protocol (batch framing, headers, answers). A central answers 426 to one it does not speak. */
export const PROTOCOL = 1;
/** The version of the event bodies; a central answers 426 to a batch whose schema is newer than it knows. */
export const SCHEMA = 1;

/** A batch holds at most this many events and bytes of events; one larger event travels alone. */
export const MAX_BATCH_EVENTS = 500;
export const MAX_BATCH_BYTES = 256 * 1024;
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
} as const;

/** Media type of a batch: newline-delimited; line 1 the header, line 2 the signature, then one event a line. */
export const BATCH_MEDIA_TYPE = 'application/x-ndjson';

// ---------------------------------------------------------------------------------------------- events

export type EnvelopeStream = 'order' | 'stock' | 'soldout' | 'inbox';

/** Every kind of envelope (a sync event) a box sends, with the stream it belongs to. */
export const ENVELOPE_KINDS = {
  /** An applied order command: the order as it now is, and the command that changed it. */
  'order.changed': 'order',
  /** A posted stock document with the ledger rows it wrote. */
  'stock.document': 'stock',
  /** A warehouse created or renamed on the box. */
  'warehouse.changed': 'stock',
  /** A staff sold-out flag set or cleared. */
  'soldout.changed': 'soldout',
  /** An entry headquarters sent down (a document, an order) applied or refused (src/shared/hq-inbox.ts). */
  'inbox.result': 'inbox',
} as const satisfies Record<string, EnvelopeStream>;
export type EnvelopeKind = keyof typeof ENVELOPE_KINDS;

/**
 * One event as it travels and is hashed: the exact JSON text is stored in the box's outbox, sent, hashed
 * and kept by the central; nobody re-serialises it. Its position (epoch, seq) is given by the batch header.
 * `boxTime` is the box's clock, kept as data only: order is the sequence, never a clock.
 */
export interface Envelope<K extends EnvelopeKind = EnvelopeKind> {
  eventId: string;
  tenant: string;
  stream: EnvelopeStream;
  aggregate: string;
  kind: K;
  schema: number;
  boxTime: string;
  body: EnvelopeBodies[K];
}

export interface OrderChangedBody {
  /** 1 for the command that created the order, then one more for each applied command. */
  version: number;
  command: { correlationId: string; kind: string; userId: string; staff: boolean; confirmedAt: string };
  /** The Order of the interface, as the box's API returns it. */
  order: { id: string; tenant: string; status: string; buckets: { venue: string }[] } & Record<string, unknown>;
  /** What the Order does not show but a box restored from an old copy needs to rebuild it. */
  detail: { contact: Record<string, string> | null; extra: Record<string, unknown> | null; rounds: number; lineRounds: Record<string, number | null> };
}

/** A ledger row: [warehouse, line, item, unit, delta in micro-units]. */
export type LedgerTuple = [string, number, string, string, number];

export interface StockDocumentBody {
  /** The document as the box's API returned it. */
  document: {
    id: string; kind: string; warehouse: string; number: string; targetWarehouse?: string; user: string; created: string;
    items: unknown[]; unlockItems: boolean; extra: Record<string, string>;
  };
  ledger: LedgerTuple[];
}

export interface WarehouseChangedBody {
  id: string;
  name: string;
}

export interface SoldOutChangedBody {
  venue: string;
  menu: string;
  productId: string;
  locked: boolean;
  reason: string | null;
}

export interface EnvelopeBodies {
  'order.changed': OrderChangedBody;
  'stock.document': StockDocumentBody;
  'warehouse.changed': WarehouseChangedBody;
  'soldout.changed': SoldOutChangedBody;
  'inbox.result': InboxResultBody;
}

/** The envelope's text; `bodyJson` may be a JSON text built already (the order the socket pushes). */
export function envelopeText(e: Omit<Envelope, 'body' | 'stream' | 'schema'>, bodyJson: string): string {
  const head = JSON.stringify({
    eventId: e.eventId, tenant: e.tenant, stream: ENVELOPE_KINDS[e.kind], aggregate: e.aggregate, kind: e.kind,
    schema: SCHEMA, boxTime: e.boxTime,
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

/**
 * The header of a batch. The device's signature covers the header's exact bytes; `lastHash` is the chain
 * after the batch's events starting from `prevHash`, so the signature covers every event too.
 */
export interface BatchHeader {
  protocol: number;
  schema: number;
  tenant: string;
  deviceId: string;
  keyId: string;
  epoch: number;
  firstSeq: number;
  lastSeq: number;
  prevHash: string;
  lastHash: string;
  /** The newest seq in the box's outbox when the batch was made: the central reports lag from it. */
  pendingSeq: number;
  /** The box's clock, as data only. */
  sentAt: string;
}

/** The answer to an accepted batch: the central committed everything up to `ackedSeq`. */
export interface BatchAck {
  ackedSeq: number;
  ackedHash: string;
  /** Events that broke a rule: kept aside by the central, which still advanced past them. */
  deadLetters: { seq: number; eventId: string; reason: string }[];
}

/** The central's position for a device: the last event it committed. */
export interface Head {
  epoch: number;
  seq: number;
  hash: string;
}

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
  if (lines.length < 3) throw new BatchFormatError('a batch has a header line, a signature line and at least one event');
  const [headerText, signatureText, ...envelopes] = lines as [string, string, ...string[]];
  let header: unknown;
  try {
    header = JSON.parse(headerText);
  } catch {
    throw new BatchFormatError('the header line is not JSON');
  }
  const problem = headerProblem(header);
  if (problem) throw new BatchFormatError(`header: ${problem}`);
  if (!/^[A-Za-z0-9+/]{86}==$/.test(signatureText)) throw new BatchFormatError('the signature line is not a base64 Ed25519 signature');
  return { headerText, header: header as BatchHeader, signature: Buffer.from(signatureText, 'base64'), envelopes };
}

const HEX64 = /^[0-9a-f]{64}$/;
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

function headerProblem(h: unknown): string | undefined {
  if (typeof h !== 'object' || h === null || Array.isArray(h)) return 'not an object';
  const x = h as Record<string, unknown>;
  for (const key of ['protocol', 'schema', 'epoch', 'firstSeq', 'lastSeq', 'pendingSeq'] as const) {
    if (!isCount(x[key])) return `${key} must be a non-negative integer`;
  }
  for (const key of ['tenant', 'deviceId', 'keyId', 'sentAt'] as const) {
    if (typeof x[key] !== 'string' || (x[key] as string).length === 0 || (x[key] as string).length > 64) return `${key} must be a short string`;
  }
  for (const key of ['prevHash', 'lastHash'] as const) {
    if (typeof x[key] !== 'string' || !HEX64.test(x[key] as string)) return `${key} must be 64 hex digits`;
  }
  if ((x.firstSeq as number) < 1 || (x.lastSeq as number) < (x.firstSeq as number)) return 'firstSeq..lastSeq is not a range from 1';
  return undefined;
}

// ---------------------------------------------------------------------------------------------- keys

/** A device's key id: the first 16 hex digits of sha256(public key). */
export const keyIdOf = (publicKey: Uint8Array): string => createHash('sha256').update(publicKey).digest('hex').slice(0, 16);

/** Signs natively, the same bytes as tweetnacl (src/shared/ed25519.ts). */
export { signDetached } from './ed25519.js';

/** Verifies with node:crypto, which checks the same Ed25519 signatures natively, far faster than pure JS. */
export function verifyDetached(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  return verify(null, message, verifyKeyOf(publicKey), signature);
}

// ------------------------------------------------------------------------------------ signed requests

/**
 * Hello and the tail fetch are plain requests signed by the device: headers `x-tenant`, `x-device` and
 * `x-signature` (base64), the signature over this text. Replaying one only repeats a read.
 */
export const requestSigningText = (method: string, pathAndQuery: string, tenant: string, deviceId: string, body: string): string =>
  `${method.toUpperCase()} ${pathAndQuery}\n${tenant}\n${deviceId}\n${createHash('sha256').update(body, 'utf8').digest('hex')}`;

export interface HelloRequest {
  protocol: number;
  schema: number;
  /** The box's clock: the central records the offset, never rejects for it. */
  boxTimeMs: number;
  /** The newest seq in the box's outbox. */
  pendingSeq: number;
  version: string;
}

export interface HelloResponse {
  head: Head;
  serverTimeMs: number;
  protocols: number[];
  schema: number;
}

export interface EnrolRequest {
  code: string;
  /** The device's Ed25519 public key, base64. */
  publicKey: string;
  name?: string;
}

export interface EnrolResponse {
  deviceId: string;
  tenant: string;
  venue: string;
  keyId: string;
}

/** One stored event of the tail fetch; `envelope` is the exact text the box once sent. */
export interface TailEvent {
  seq: number;
  epoch: number;
  hash: string;
  envelope: string;
}

export interface TailResponse {
  head: Head;
  events: TailEvent[];
  /**
   * The header line and signature (base64) of the batch that set the head, exactly as the device sent them;
   * null while the head is seq 0. A box reconciling with its central checks its own signature on it: the header's
   * lastHash is the chain over every event up to the head, so the central cannot give a box events it never sent.
   */
  proof: { header: string; signature: string } | null;
}

/**
 * Why a central refuses a request (the `code` of its error body): the sync codes of the catalogue
 * (src/shared/errors.ts, SYNC_ERRORS: syncGap, syncDiverged, invalidBatch, unsupportedProtocol), and of the API's
 * codes 401 `unauthorized` (unknown or revoked device, unknown key id, a bad signature), 413 `payloadTooLarge`
 * (larger than MAX_REQUEST_BYTES) and 429 `tooManyRequests` (too many boxes at once; Retry-After). A 409 body also
 * carries `expectedSeq` and `head`, so the box knows where to resume.
 */
export type SyncRejection = SyncErrorCode | Extract<ErrorCode, 'unauthorized' | 'payloadTooLarge' | 'tooManyRequests'>;

export interface SyncErrorBody {
  message: string;
  codes: { code: SyncRejection | string; message: string; args: string[] }[];
  expectedSeq?: number;
  head?: Head;
}
