import type { Principal } from '../http/types.js';
import { AppError } from '../shared/errors.js';

/**
 * Open sockets per user and per token (jti). A staff venue socket (`?venue=V`) counts for the staff user who
 * opened it. Past a limit the upgrade is refused with 429 rather than closing the oldest socket: a stolen or
 * looping token must not be able to push the real device off, and a refused client knows why.
 */
export function createSocketCounts(limits: { maxPerUser: number; maxPerToken: number }) {
  const counts = new Map<string, number>();
  const keysOf = (p: Principal) => [`user:${p.tenantId}:${p.userId}`, `token:${p.jti}`] as const;

  return {
    keysOf,
    /** Throws 429 `tooManyRequests` (args: the option's name) when the principal has its share open. */
    check(p: Principal): void {
      const [user, token] = keysOf(p);
      for (const [key, max, option] of [
        [user, limits.maxPerUser, 'sockets.maxPerUser'],
        [token, limits.maxPerToken, 'sockets.maxPerToken'],
      ] as const) {
        if ((counts.get(key) ?? 0) >= max) {
          const message = `too many open sockets (at most ${max}, ${option}): close one first`;
          throw AppError.of('tooManyRequests', message, [option]);
        }
      }
    },
    add(keys: readonly string[]): void {
      for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
    },
    remove(keys: readonly string[]): void {
      for (const k of keys) {
        const n = (counts.get(k) ?? 0) - 1;
        if (n > 0) counts.set(k, n);
        else counts.delete(k);
      }
    },
  };
}
