import type { Queryable } from './pool.js';

/** `sync_events_y2026m11` for the month of `ms` (UTC). */
const nameOf = (year: number, month: number): string => `sync_events_y${year}m${String(month + 1).padStart(2, '0')}`;

/** The first instant of the UTC month `offset` months after the one holding `ms`. */
const monthStart = (ms: number, offset: number): Date => {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + offset, 1));
};

/**
 * Creates the raw events' partitions for the month of `nowMs` and the next one. Next month's exists before it
 * starts, so the DEFAULT partition stays empty: PostgreSQL refuses to attach a partition whose range already
 * has rows in the default one.
 */
export async function ensurePartitions(db: Queryable, nowMs: number): Promise<string[]> {
  const made: string[] = [];
  for (const offset of [0, 1]) {
    const from = monthStart(nowMs, offset);
    const to = monthStart(nowMs, offset + 1);
    const name = nameOf(from.getUTCFullYear(), from.getUTCMonth());
    await db.query(
      `CREATE TABLE IF NOT EXISTS ${name} PARTITION OF sync_events
       FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`,
    );
    made.push(name);
  }
  return made;
}

/**
 * Calls ensurePartitions once per month reached (checked before every batch: one comparison). Concurrent
 * batches share one attempt: two CREATE TABLE IF NOT EXISTS racing on one name can still collide.
 */
export function monthlyPartitions(db: Queryable, now: () => number) {
  let ensuredFor = '';
  let running: Promise<void> | undefined;
  return (): Promise<void> => {
    const key = monthStart(now(), 0).toISOString();
    if (key === ensuredFor) return Promise.resolve();
    running ??= ensurePartitions(db, now())
      .then(() => {
        ensuredFor = key;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}
