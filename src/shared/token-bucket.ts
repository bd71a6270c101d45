/** A token bucket: `burst` attempts at once, then one more every `refillSeconds`. */
export interface RateLimit {
  burst: number;
  refillSeconds: number;
}

/** Limiters past this many keys drop their full buckets (a full bucket is the same as none), then the oldest. */
const MAX_KEYS = 10_000;

export function createRateLimiter(limit: RateLimit, now: () => number) {
  const refillMs = limit.refillSeconds * 1000;
  const levels = new Map<string, { level: number; atMs: number }>();
  const levelOf = (key: string, at: number): number => {
    const b = levels.get(key);
    return b ? Math.min(limit.burst, b.level + (at - b.atMs) / refillMs) : limit.burst;
  };
  const set = (key: string, level: number, at: number): void => {
    levels.delete(key); // re-inserted last: the Map's order is oldest change first
    if (level < limit.burst) levels.set(key, { level, atMs: at });
    if (levels.size > MAX_KEYS) shrink(at);
  };
  const shrink = (at: number): void => {
    for (const key of levels.keys()) if (levelOf(key, at) >= limit.burst) levels.delete(key);
    for (const key of levels.keys()) {
      if (levels.size <= MAX_KEYS * 0.9) break;
      levels.delete(key);
    }
  };
  return {
    /** Milliseconds until one attempt is available (0: available now). */
    waitMs(key: string): number {
      const level = levelOf(key, now());
      return level >= 1 ? 0 : (1 - level) * refillMs;
    },
    take(key: string): void {
      const at = now();
      set(key, levelOf(key, at) - 1, at);
    },
    /** Takes `n` more after the fact, when the cost is known only once the work is done; the level may go below 0. */
    charge(key: string, n: number): void {
      const at = now();
      set(key, levelOf(key, at) - n, at);
    },
    give(key: string): void {
      const at = now();
      set(key, levelOf(key, at) + 1, at);
    },
    reset(key: string): void {
      levels.delete(key);
    },
    get size(): number {
      return levels.size;
    },
  };
}
