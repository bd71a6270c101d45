import { retryLater } from '../../shared/errors.js';
import { throttleAddress } from '../../shared/oauth/throttle.js';
import { createRateLimiter } from '../../shared/token-bucket.js';

/**
 * Bytes of orders the customers' commands may make the box store (docs/orders.md "Order limits"): `burstBytes` at
 * once, refilled at `bytesPerMinute`. The per-customer command rate holds one token, but one address may hold 60
 * anonymous tokens a minute (`auth.anonymous.perAddressPerMinute`), each with a rate of its own: 60 of them
 * rewriting 400-line orders stored 594 MB a minute. These budgets hold the address, and every customer of the box
 * together, to what a busy venue needs (docs/performance.md "Many anonymous customers from one address").
 */
export interface WriteRate {
  burstBytes: number;
  bytesPerMinute: number;
}

export interface WriteBudgetOptions {
  /** Per client address (an IPv6 client by its /64, as the token throttles: src/shared/oauth/throttle.ts). */
  perAddress: WriteRate;
  /** Every customer of the tenant on this box (the venue's) together, whatever their addresses. */
  venue: WriteRate;
}

/** The budgets count in KiB. */
const UNIT = 1024;
/**
 * A command's bytes are known only once it is applied, so it is charged an estimate when it is admitted (what the
 * last command on its order stored, and this much for each line it adds: an Order line is about 450 bytes of JSON,
 * stored three times) and the difference once applied. Without the estimate, commands sent together (60 tokens at
 * once) would all pass a budget that had one unit left.
 */
export const BYTES_PER_NEW_LINE = 1350;
/** What a command on an order this box has not sized yet is estimated at: an empty order stored three times. */
export const BYTES_OF_AN_ORDER = 4096;
/** An admitted command not charged after this long (its answer lost) is let go, with its estimate. */
const PENDING_MS = 30_000;
/** Commands admitted and not yet applied, and orders whose size is remembered, at most (the oldest go first). */
const MAX_KEPT = 10_000;

const bucketOf = (rate: WriteRate, now: () => number) =>
  createRateLimiter(
    { burst: Math.max(1, rate.burstBytes / UNIT), refillSeconds: 60 / Math.max(1, rate.bytesPerMinute / UNIT) },
    now,
  );

interface Pending {
  tenantId: string;
  address: string;
  /** Units taken at admission. */
  estimate: number;
  atMs: number;
}

export function createWriteBudget(options: WriteBudgetOptions, now: () => number) {
  const perAddress = bucketOf(options.perAddress, now);
  const venue = bucketOf(options.venue, now);
  const pending = new Map<string, Pending>();
  /** What the last applied command of an order stored, by tenant and order id. */
  const sizes = new Map<string, number>();

  const sweep = (at: number): void => {
    for (const [id, held] of pending) {
      if (held.atMs > at - PENDING_MS && pending.size <= MAX_KEPT) break; // oldest first
      pending.delete(id);
    }
  };
  /** Charges a held command the difference between what it stored and its estimate. */
  const settle = (correlationId: string, bytes: number): void => {
    // Not held: staff, a command confirmed before a restart, or an order from the central.
    const held = pending.get(correlationId);
    if (!held) return;
    pending.delete(correlationId);
    const units = bytes / UNIT - held.estimate;
    perAddress.charge(held.address, units);
    venue.charge(held.tenantId, units);
  };
  const tooMany = (option: string, message: string, waitMs: number) =>
    retryLater('tooManyRequests', `${message}: retry after Retry-After seconds`, waitMs, [option]);

  return {
    /**
     * Admits a customer's command from `clientAddress` on order `orderId` adding `newLines` lines, or throws 429
     * tooManyRequests with Retry-After (the config option that refused it in `args`): nothing is queued. Takes its
     * estimate from both budgets (they may go below zero: the next command waits the debt out); `hold` remembers
     * it for `charge`. Returns what `hold` takes.
     */
    admit(tenantId: string, clientAddress: string, orderId: string, newLines: number): Omit<Pending, 'atMs'> {
      const address = `${tenantId}\n${throttleAddress(clientAddress)}`;
      const addressWait = perAddress.waitMs(address);
      if (addressWait > 0) throw tooMany('ordering.addressWriteRate', 'this address has stored too much', addressWait);
      const venueWait = venue.waitMs(tenantId);
      if (venueWait > 0) throw tooMany('ordering.venueWriteRate', "the venue's customers stored too much", venueWait);
      const bytes = (sizes.get(`${tenantId}\n${orderId}`) ?? BYTES_OF_AN_ORDER) + newLines * BYTES_PER_NEW_LINE;
      const estimate = Math.max(1, bytes / UNIT);
      perAddress.charge(address, estimate);
      venue.charge(tenantId, estimate);
      return { tenantId, address, estimate };
    },
    /** The admitted command `correlationId` is queued: it is charged what it stored once it is applied. */
    hold(correlationId: string, admitted: Omit<Pending, 'atMs'>): void {
      const at = now();
      pending.set(correlationId, { ...admitted, atMs: at });
      if (pending.size > MAX_KEPT || pending.values().next().value!.atMs <= at - PENDING_MS) sweep(at);
    },
    /** The command was not queued after all (its confirmation failed): its estimate is given back. */
    release(correlationId: string): void {
      const held = pending.get(correlationId);
      if (!held) return;
      pending.delete(correlationId);
      perAddress.charge(held.address, -held.estimate);
      venue.charge(held.tenantId, -held.estimate);
    },
    /**
     * An applied command of order `orderId` stored `bytes`: its budgets are charged the difference from its
     * estimate, and the order's size is remembered for the next command's estimate.
     */
    charge(correlationId: string, tenantId: string, orderId: string, bytes: number): void {
      const key = `${tenantId}\n${orderId}`;
      sizes.delete(key); // re-inserted last: the Map's order is oldest change first
      sizes.set(key, bytes);
      if (sizes.size > MAX_KEPT) sizes.delete(sizes.keys().next().value!);
      settle(correlationId, bytes);
    },
    /** A command refused when applied stored only its NOTIFICATION, `bytes`; its order is as it was. */
    refused(correlationId: string, bytes: number): void {
      settle(correlationId, bytes);
    },
  };
}
export type WriteBudget = ReturnType<typeof createWriteBudget>;
