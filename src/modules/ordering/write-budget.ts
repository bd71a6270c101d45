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

/** The budgets count in KiB: a bucket takes one unit at admission, and the rest once the bytes are known. */
const UNIT = 1024;
/**
 * Commands of one address admitted and not yet applied. A command's bytes are known only once it is applied, so
 * without this many concurrent commands (60 tokens at once) would all pass a bucket that had one unit left; with
 * it, what passes the budget before it is charged is at most this many commands (each at most an order of
 * `ordering.maxLines` lines, three times: about 0.5 MB at 400 lines). A kiosk or a phone gives one at a time.
 */
export const MAX_IN_FLIGHT_PER_ADDRESS = 8;
/** An admitted command not charged after this long (its answer lost to a crash of the handler) is let go. */
const IN_FLIGHT_MS = 30_000;
/** Commands admitted and not yet applied, at most: past it the oldest is let go. */
const MAX_PENDING = 10_000;

const bucketOf = (rate: WriteRate, now: () => number) =>
  createRateLimiter(
    { burst: Math.max(1, rate.burstBytes / UNIT), refillSeconds: 60 / Math.max(1, rate.bytesPerMinute / UNIT) },
    now,
  );

interface Pending {
  tenantId: string;
  address: string;
  atMs: number;
}

export function createWriteBudget(options: WriteBudgetOptions, now: () => number) {
  const perAddress = bucketOf(options.perAddress, now);
  const venue = bucketOf(options.venue, now);
  const pending = new Map<string, Pending>();
  const inFlight = new Map<string, number>();

  const release = (correlationId: string): Pending | undefined => {
    const held = pending.get(correlationId);
    if (!held) return undefined;
    pending.delete(correlationId);
    const n = (inFlight.get(held.address) ?? 1) - 1;
    if (n > 0) inFlight.set(held.address, n);
    else inFlight.delete(held.address);
    return held;
  };
  const sweep = (at: number): void => {
    for (const [id, held] of pending) {
      if (held.atMs > at - IN_FLIGHT_MS && pending.size <= MAX_PENDING) break; // oldest first
      release(id);
    }
  };
  const tooMany = (option: string, message: string, waitMs: number) =>
    retryLater('tooManyRequests', `${message}: retry after Retry-After seconds`, waitMs, [option]);

  return {
    /**
     * Admits a customer's command from `clientAddress`, or throws 429 tooManyRequests with Retry-After (the
     * config option that refused it in `args`): nothing is queued. Takes one unit from both budgets now; `charge`
     * takes the rest once the command is applied and its size is known. Returns the address's key for `hold`.
     */
    admit(tenantId: string, clientAddress: string): string {
      const address = `${tenantId}\n${throttleAddress(clientAddress)}`;
      const addressWait = perAddress.waitMs(address);
      if (addressWait > 0) throw tooMany('ordering.addressWriteRate', 'this address has stored too much', addressWait);
      const venueWait = venue.waitMs(tenantId);
      if (venueWait > 0) throw tooMany('ordering.venueWriteRate', "the venue's customers stored too much", venueWait);
      if ((inFlight.get(address) ?? 0) >= MAX_IN_FLIGHT_PER_ADDRESS) sweep(now());
      if ((inFlight.get(address) ?? 0) >= MAX_IN_FLIGHT_PER_ADDRESS)
        throw tooMany('ordering.addressWriteRate', 'too many commands of this address wait to be applied', 1000);
      perAddress.take(address);
      venue.take(tenantId);
      return address;
    },
    /** The admitted command `correlationId` is queued: it is charged to `address` once it is applied. */
    hold(correlationId: string, tenantId: string, address: string): void {
      const at = now();
      pending.set(correlationId, { tenantId, address, atMs: at });
      inFlight.set(address, (inFlight.get(address) ?? 0) + 1);
      if (pending.size > MAX_PENDING) sweep(at);
    },
    /** The command was not queued after all (its confirmation failed): nothing more to charge. */
    release(correlationId: string): void {
      release(correlationId);
    },
    /**
     * Charges an applied (or refused) command for the `bytes` it stored, less the unit taken at admission. A
     * budget may go below zero: the next command waits until the debt is paid back at the refill rate.
     */
    charge(correlationId: string, bytes: number): void {
      // Not held: staff, a command confirmed before a restart, or an order from the central.
      const held = release(correlationId);
      const units = bytes / UNIT - 1;
      if (!held || units <= 0) return;
      perAddress.charge(held.address, units);
      venue.charge(held.tenantId, units);
    },
  };
}
export type WriteBudget = ReturnType<typeof createWriteBudget>;
