import { inTransaction, type Pool } from './pool.js';
import { INSUFFICIENT_PRIVILEGE, lacksRights } from './start-errors.js';

/** `sync_events_y2026m11` for the month of `ms` (UTC). */
const nameOf = (year: number, month: number): string => `sync_events_y${year}m${String(month + 1).padStart(2, '0')}`;

/** The first instant of the UTC month `offset` months after the one holding `ms`. */
const monthStart = (ms: number, offset: number): Date => {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + offset, 1));
};

// Any constant: central processes on one database create a month's partition one at a time.
const PARTITION_LOCK = 0x7e_57_ce_03;

/**
 * Creates the raw events' partitions for the month of `nowMs` and the next one. Next month's exists before it
 * starts, so the DEFAULT partition stays empty: PostgreSQL refuses to attach a partition whose range already
 * has rows in the default one. Under an advisory lock: two processes' CREATE TABLE IF NOT EXISTS on one name
 * can still collide. A database user that may not create them is told what it lacks (docs/sync.md "Several central processes").
 */
export async function ensurePartitions(pool: Pool, nowMs: number): Promise<string[]> {
  try {
    return await inTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [PARTITION_LOCK]);
      // CREATE TABLE IF NOT EXISTS passes for a month that exists whatever the rights: asked, so that a user
      // without them is told at start, not at the first batch of a new month.
      const { rows } = await client.query<{ create: boolean; owns: boolean }>(
        `SELECT has_schema_privilege(current_user, c.relnamespace, 'CREATE') AS create,
                pg_has_role(current_user, c.relowner, 'USAGE') AS owns
         FROM pg_class c WHERE c.oid = 'sync_events'::regclass`,
      );
      if (!rows[0]?.create || !rows[0].owns) {
        throw Object.assign(new Error('no CREATE on the schema of sync_events, or not its owner'), {
          code: INSUFFICIENT_PRIVILEGE,
        });
      }
      const made: string[] = [];
      for (const offset of [0, 1]) {
        const from = monthStart(nowMs, offset);
        const to = monthStart(nowMs, offset + 1);
        const name = nameOf(from.getUTCFullYear(), from.getUTCMonth());
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${name} PARTITION OF sync_events
           FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`,
        );
        made.push(name);
      }
      return made;
    });
  } catch (err) {
    throw lacksRights(err, 'create the monthly partitions of sync_events') ?? err;
  }
}

/**
 * Calls ensurePartitions once per month reached (checked before every batch: one comparison). Concurrent
 * batches share one attempt: two CREATE TABLE IF NOT EXISTS racing on one name can still collide.
 */
export function monthlyPartitions(db: Pool, now: () => number) {
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
