import { OAuthError } from '../oauth-error.js';
import { type RateLimit, createRateLimiter } from '../token-bucket.js';

export interface ThrottleOptions {
  /** Failed checks of one account (staff user or OAuth client) from one client address. */
  accountAtAddress: RateLimit;
  /** Failed checks of one account from all addresses together: a high ceiling against many attackers. */
  account: RateLimit;
  /** Failed checks of any account from one address: one client trying many usernames. */
  address: RateLimit;
  /**
   * Failed checks from one known device (a valid device token: ./device-tokens.ts) of its own user, instead of
   * the three buckets above; the `accountAtAddress` limits when not given.
   */
  device?: RateLimit;
  /** scrypt verifications running at once; the rest wait in the queue. */
  maxConcurrentHashes: number;
  /** Verifications waiting for a slot; beyond this a check is refused at once. */
  maxQueuedHashes: number;
}

/** 429 temporarily_unavailable with Retry-After: whole seconds until an attempt is available, at least 1. */
export const tooMany = (waitMs: number, why: string): OAuthError =>
  new OAuthError('temporarily_unavailable', why, Math.max(1, Math.ceil(waitMs / 1000)));

/**
 * Throttles password and client-secret checks. Every check takes one attempt from three buckets before scrypt
 * runs and gets them back if the secret was right, so only failures count: attackers elsewhere never use up
 * the real user's attempts at their own address. A check that finds a bucket empty, or the scrypt queue full,
 * is answered at once with 429 temporarily_unavailable and no scrypt at all. Attempts are taken before the
 * hash runs (not after it fails), so a burst sent in parallel is counted as it arrives.
 *
 * A check from a known device (its user's valid device token) takes from that device's bucket only, never from
 * the account's shared buckets, and waits for scrypt in a queue of its own that is served first: guessers on any
 * number of addresses can empty the strangers' budget of a user, and fill the strangers' queue, but not lock
 * the user out of a device it signed in on before (docs/api.md "Sign-in throttling").
 */
export function createLoginThrottle(options: ThrottleOptions, now: () => number) {
  const pair = createRateLimiter(options.accountAtAddress, now);
  const account = createRateLimiter(options.account, now);
  const address = createRateLimiter(options.address, now);
  const device = createRateLimiter(options.device ?? options.accountAtAddress, now);
  let running = 0;
  const queue: (() => void)[] = [];
  const knownQueue: (() => void)[] = [];

  const release = (): void => {
    const next = knownQueue.shift() ?? queue.shift();
    if (next) next();
    else running -= 1;
  };

  async function hash(check: () => Promise<boolean>): Promise<boolean> {
    try {
      return await check();
    } finally {
      release();
    }
  }

  async function verifyKnown(deviceKey: string, check: () => Promise<boolean>): Promise<boolean> {
    const wait = device.waitMs(deviceKey);
    if (wait > 0) throw tooMany(wait, 'too many failed sign-ins on this device; retry after Retry-After seconds');
    if (running >= options.maxConcurrentHashes && knownQueue.length >= options.maxQueuedHashes) {
      throw tooMany(1000, 'too many sign-ins at once; retry after Retry-After seconds');
    }
    device.take(deviceKey);
    if (running < options.maxConcurrentHashes) running += 1;
    else await new Promise<void>((resolve) => knownQueue.push(resolve));
    const ok = await hash(check);
    if (ok) device.reset(deviceKey);
    return ok;
  }

  return {
    /**
     * Runs `check` (a secret verification) under the limits; throws OAuthError temporarily_unavailable (429)
     * without running it when the account or the address has no attempts left or too many checks are waiting.
     */
    async verify(
      accountKey: string,
      clientAddress: string,
      check: () => Promise<boolean>,
      /** The device id of a valid device token of this account, if one was presented. */
      knownDevice?: string,
    ): Promise<boolean> {
      if (knownDevice !== undefined) return verifyKnown(`${accountKey}\0${knownDevice}`, check);
      const pairKey = `${accountKey}\0${clientAddress}`;
      const wait = Math.max(pair.waitMs(pairKey), account.waitMs(accountKey));
      if (wait > 0) throw tooMany(wait, 'too many failed sign-ins for this account; retry after Retry-After seconds');
      const addressWait = address.waitMs(clientAddress);
      if (addressWait > 0) {
        throw tooMany(addressWait, 'too many failed sign-ins from this address; retry after Retry-After seconds');
      }
      if (running >= options.maxConcurrentHashes && queue.length >= options.maxQueuedHashes) {
        throw tooMany(1000, 'too many sign-ins at once; retry after Retry-After seconds');
      }
      pair.take(pairKey);
      account.take(accountKey);
      address.take(clientAddress);
      if (running < options.maxConcurrentHashes) running += 1;
      else await new Promise<void>((resolve) => queue.push(resolve));
      const ok = await hash(check);
      if (ok) {
        // The owner proved the secret from this address: its own typos there are forgiven.
        pair.reset(pairKey);
        account.give(accountKey);
        address.give(clientAddress);
      }
      return ok;
    },
    /** For tests and diagnostics. */
    stats: () => ({
      running,
      queued: queue.length + knownQueue.length,
      limitedKeys: pair.size + account.size + address.size + device.size,
    }),
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;

/**
 * The address a client is throttled by: an IPv4 address as it is, an IPv6 address by its /64 prefix (one
 * host picks any address in its /64 at will), and an IPv4-mapped IPv6 address as the IPv4 address.
 */
export function throttleAddress(text: string): string {
  if (!text.includes(':')) return text;
  const [head = '', tail] = text.toLowerCase().split('::', 2) as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const last = right.at(-1) ?? left.at(-1) ?? '';
  // An embedded dotted IPv4 tail ("::ffff:1.2.3.4") counts as two groups.
  const dotted = last.includes('.') ? last : undefined;
  if (dotted) (right.length > 0 ? right : left).pop();
  const groupCount = left.length + right.length + (dotted ? 2 : 0);
  const fill = tail === undefined ? [] : Array<string>(Math.max(0, 8 - groupCount)).fill('0');
  const groups = [...left, ...fill, ...right].map((g) => g.replace(/^0+(?=.)/, ''));
  if (groups.slice(0, 5).every((g) => g === '0') && groups[5] === 'ffff') {
    if (dotted) return dotted;
    const hi = parseInt(groups[6] ?? '0', 16);
    const lo = parseInt(groups[7] ?? '0', 16);
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  }
  return `${groups.slice(0, 4).join(':')}::/64`;
}
