import { randomFillSync, randomUUID } from 'node:crypto';
import { UUID_PATTERN } from './types.js';

export const newId = (): string => randomUUID();

const UUID = new RegExp(UUID_PATTERN);
export const isUuid = (value: string): boolean => UUID.test(value);

/**
 * A UUIDv7 (RFC 9562): 48 bits of milliseconds, then random bits. Event ids sort roughly by creation, which
 * keeps the central's unique index on them append-mostly; nothing relies on their order.
 */
export function newId7(nowMs: number = Date.now()): string {
  const bytes = Buffer.allocUnsafe(16);
  randomTail(bytes);
  bytes.writeUIntBE(nowMs, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// Random bytes for ids come from a pool refilled 4 KiB at a time: one call into the system's generator for 400
// ids instead of one each (every order command takes several ids).
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/** Fills bytes 6..15 of `id` with fresh random bytes. */
function randomTail(id: Buffer): void {
  if (poolAt + 10 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  pool.copy(id, 6, poolAt, poolAt + 10);
  poolAt += 10;
}
