import { createRateLimiter } from '../../shared/token-bucket.js';
import { tooMany } from '../../shared/oauth/throttle.js';

/** Limits on anonymous users (config `auth.anonymous`). */
export interface AnonymousOptions {
  /**
   * New anonymous tokens per client address (an IPv6 client by its /64): a bucket of this many at once,
   * refilled at this many per minute. A token costs a user id and a refresh row kept for weeks, and asking
   * is free, so without a limit one client could mint tokens until the disk is full.
   */
  perAddressPerMinute: number;
  /** An anonymous user with no order loses its refresh tokens once it has not refreshed for this long. */
  idleRefreshMs: number;
}

/** The per-address budget of new anonymous tokens; staff sign-in and refresh never pass through it. */
export function createAnonymousLimit(options: AnonymousOptions, now: () => number) {
  const limiter = createRateLimiter(
    { burst: options.perAddressPerMinute, refillSeconds: 60 / options.perAddressPerMinute },
    now,
  );
  return {
    /** Takes one token from the address's budget, or throws 429 temporarily_unavailable with Retry-After. */
    take(clientAddress: string): void {
      const wait = limiter.waitMs(clientAddress);
      if (wait > 0)
        throw tooMany(wait, 'too many new anonymous users from this address; retry after Retry-After seconds');
      limiter.take(clientAddress);
    },
  };
}
