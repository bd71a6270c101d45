/** A token bucket: `burst` attempts at once, then one more every `refillSeconds`. */
export interface BucketLimit {
  burst: number;
  refillSeconds: number;
}

/** Bucket maps past this size drop their full buckets (a full bucket is the same as no bucket), then the oldest. */
const MAX_BUCKETS = 10_000;

export function createBuckets(limit: BucketLimit, now: () => number) {
  const refillMs = limit.refillSeconds * 1000;
  const buckets = new Map<string, { level: number; atMs: number }>();
  const levelOf = (key: string, at: number): number => {
    const b = buckets.get(key);
    return b ? Math.min(limit.burst, b.level + (at - b.atMs) / refillMs) : limit.burst;
  };
  const set = (key: string, level: number, at: number): void => {
    buckets.delete(key); // re-inserted last: the Map's order is oldest change first
    if (level < limit.burst) buckets.set(key, { level, atMs: at });
    if (buckets.size > MAX_BUCKETS) shrink(at);
  };
  const shrink = (at: number): void => {
    for (const key of buckets.keys()) if (levelOf(key, at) >= limit.burst) buckets.delete(key);
    for (const key of buckets.keys()) {
      if (buckets.size <= MAX_BUCKETS * 0.9) break;
      buckets.delete(key);
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
      buckets.delete(key);
    },
    get size(): number {
      return buckets.size;
    },
  };
}
