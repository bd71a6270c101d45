import { type Static, Type } from '@sinclair/typebox';
import { UUID_PATTERN } from '../../shared/types.js';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Transaction, WalCursor } from './wal-format.js';

/**
 * What the two boxes of a venue say to each other (docs/architecture.md "A standby box"). The standby opens a
 * WebSocket to the primary (`GET /standby-api/stream`, header `x-box-id`); control messages are JSON text frames,
 * pages travel in binary ones. Both sides prove who they are with the Ed25519 keys they exchanged at pairing:
 * the primary sends a CHALLENGE, the standby answers with AUTH (its signature of the challenge, and its own
 * challenge), the primary with WELCOME (its signature). Then the primary sends a snapshot or resumes from the
 * standby's position, and SHIP messages follow, each acknowledged with ACK once the standby holds it durably.
 */

export const STREAM_PATH = '/standby-api/stream';
export const BOX_ID_HEADER = 'x-box-id';

/** A position in the primary's WAL: the generation (its salts), the frames, the running checksum. */
export const Position = Type.Object({
  salt1: Type.Integer({ minimum: 0 }),
  salt2: Type.Integer({ minimum: 0 }),
  frames: Type.Integer({ minimum: 0 }),
  cksum1: Type.Integer({ minimum: 0 }),
  cksum2: Type.Integer({ minimum: 0 }),
});
export type Position = Static<typeof Position>;

/** The position of a snapshot taken when the primary had no WAL yet: what follows is the start of the next one. */
export const NO_WAL: Position = { salt1: 0, salt2: 0, frames: 0, cksum1: 0, cksum2: 0 };

export const samePosition = (a: Position | null, b: Position | null): boolean =>
  a !== null &&
  b !== null &&
  a.salt1 === b.salt1 &&
  a.salt2 === b.salt2 &&
  a.frames === b.frames &&
  a.cksum1 === b.cksum1 &&
  a.cksum2 === b.cksum2;

const Nonce = Type.String({ pattern: '^[A-Za-z0-9_-]{22,64}$' });
const Signature = Type.String({ pattern: '^[A-Za-z0-9_-]{86}$' });
const BoxId = Type.String({ pattern: UUID_PATTERN });

/** Who a box is and what it runs: the standby refuses a primary it cannot follow, and the other way round. */
const Release = { version: Type.String({ maxLength: 64 }), schema: Type.Integer({ minimum: 0 }) };

export const Challenge = Type.Object({
  type: Type.Literal('CHALLENGE'),
  nonce: Nonce,
  boxId: BoxId,
  term: Type.Integer({ minimum: 0 }),
  ...Release,
});
export const Auth = Type.Object({
  type: Type.Literal('AUTH'),
  signature: Signature,
  nonce: Nonce,
  term: Type.Integer({ minimum: 0 }),
  ...Release,
  /** Where its copy stands, if it has one worth resuming from. */
  position: Type.Union([Position, Type.Null()]),
});
export const Welcome = Type.Object({
  type: Type.Literal('WELCOME'),
  signature: Signature,
  /** 'resume': SHIP follows from the standby's position; 'snapshot': SNAPSHOT comes first. */
  mode: Type.Union([Type.Literal('resume'), Type.Literal('snapshot')]),
});
/** Page count and size of the snapshot whose pages follow in binary frames (kind SNAPSHOT_PAGES). */
export const SnapshotBegin = Type.Object({
  type: Type.Literal('SNAPSHOT'),
  pageSize: Type.Integer({ minimum: 512, maximum: 65536 }),
  pages: Type.Integer({ minimum: 1 }),
});
/** The snapshot is whole: it is the primary's database as of `position` (NO_WAL: before any WAL). */
export const SnapshotEnd = Type.Object({ type: Type.Literal('SNAPSHOT_END'), position: Position });
/** A file of the data directory the box's state needs besides the database (the token key, the device). */
export const FileCopy = Type.Object({
  type: Type.Literal('FILE'),
  name: Type.String({ pattern: '^[a-z0-9][a-z0-9.-]{0,63}$' }),
  /** Base64 of the content; null when the primary has no such file. */
  content: Type.Union([Type.String({ maxLength: 65536 }), Type.Null()]),
});
export const Ping = Type.Object({ type: Type.Literal('PING'), term: Type.Integer({ minimum: 0 }) });
/** The standby holds everything up to SHIP `id` durably (0: the snapshot). */
export const Ack = Type.Object({ type: Type.Literal('ACK'), id: Type.Integer({ minimum: 0 }) });
/** Why one side ends the stream: the other reads it before the close. */
export const Refusal = Type.Object({
  type: Type.Literal('REFUSED'),
  reason: Type.Union([
    Type.Literal('unpaired'),
    Type.Literal('badSignature'),
    Type.Literal('release'),
    Type.Literal('fenced'),
    Type.Literal('replaced'),
  ]),
  message: Type.String({ maxLength: 500 }),
  term: Type.Integer({ minimum: 0 }),
});

export const ToStandby = Type.Union([Challenge, Welcome, SnapshotBegin, SnapshotEnd, FileCopy, Ping, Refusal]);
export type ToStandby = Static<typeof ToStandby>;
export const ToPrimary = Type.Union([Auth, Ack, Refusal]);
export type ToPrimary = Static<typeof ToPrimary>;
export const toStandbyCheck = TypeCompiler.Compile(ToStandby);
const positionCheck = TypeCompiler.Compile(Position);
export const toPrimaryCheck = TypeCompiler.Compile(ToPrimary);

/** A JSON text frame, or undefined when it is not one of `check`'s messages. */
export function parseMessage<T>(text: string, check: { Check(v: unknown): v is T }): T | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return check.Check(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Binary frames: one byte of kind, then the kind's bytes. */
export const SNAPSHOT_PAGES = 1;
export const SHIP = 2;

/**
 * SHIP: kind, a 4-byte length, a JSON header (`id`, the position after it, each transaction's page numbers and
 * size), then every page in order.
 */
export interface ShipHeader {
  id: number;
  /** Where the standby's copy must stand for these transactions to follow: it refuses a SHIP that does not. */
  from: Position;
  position: Position;
  transactions: { pgnos: number[]; dbPages: number }[];
}

export function encodeShip(id: number, from: Position, position: Position, transactions: Transaction[]): Buffer {
  const header: ShipHeader = {
    id,
    from,
    position,
    transactions: transactions.map((t) => ({ pgnos: t.pages.map((p) => p.pgno), dbPages: t.dbPages })),
  };
  const json = Buffer.from(JSON.stringify(header));
  const head = Buffer.alloc(5);
  head.writeUInt8(SHIP, 0);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json, ...transactions.flatMap((t) => t.pages.map((p) => p.data))]);
}

/** A SHIP frame back into its header and transactions; undefined when it is malformed. */
export function decodeShip(
  frame: Buffer,
  pageSize: number,
): { header: ShipHeader; transactions: Transaction[] } | undefined {
  if (frame.length < 5 || frame.readUInt8(0) !== SHIP) return undefined;
  const length = frame.readUInt32BE(1);
  if (5 + length > frame.length) return undefined;
  let header: ShipHeader;
  try {
    header = JSON.parse(frame.subarray(5, 5 + length).toString('utf8')) as ShipHeader;
  } catch {
    return undefined;
  }
  if (!Number.isInteger(header?.id) || !Array.isArray(header.transactions)) return undefined;
  if (!positionCheck.Check(header.from) || !positionCheck.Check(header.position)) return undefined;
  let at = 5 + length;
  const transactions: Transaction[] = [];
  for (const t of header.transactions) {
    if (!Array.isArray(t.pgnos) || !Number.isInteger(t.dbPages) || t.dbPages < 1) return undefined;
    const pages = t.pgnos.map((pgno) => {
      const data = frame.subarray(at, at + pageSize);
      at += pageSize;
      return { pgno, data };
    });
    if (at > frame.length || pages.some((p) => !Number.isInteger(p.pgno) || p.pgno < 1)) return undefined;
    transactions.push({ pages, dbPages: t.dbPages });
  }
  return at === frame.length ? { header, transactions } : undefined;
}

export const positionOf = (c: WalCursor): Position => ({
  salt1: c.header.salt1,
  salt2: c.header.salt2,
  frames: c.frames,
  cksum1: c.cksum1,
  cksum2: c.cksum2,
});

/** Close codes of the stream (4000-4999 are the application's). */
export const CLOSE_REFUSED = 4403;
/** The primary ends the stream (another replaced it, a snapshot is due, the standby fell behind): connect again. */
export const CLOSE_REPLACED = 4409;
