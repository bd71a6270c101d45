import { MIGRATIONS } from '../../db/migrate.js';
import type { Pool } from '../../db/pool.js';

export type DatabaseState =
  | { ok: true; schema: number; latencyMs: number }
  | { ok: false; reason: 'unreachable' | 'schema'; message: string };

/** A probe longer than this counts as unreachable: a balancer's health check must get its answer in time. */
const PROBE_TIMEOUT_MS = 2000;
/** Answers within this long of a probe reuse it: N balancers checking every second cost one query. */
const PROBE_REUSE_MS = 1000;

/**
 * Whether this process can serve: its database answers, at the schema this code knows (docs/sync.md "Running
 * it": the balancer's health check). One probe at a time; answers within PROBE_REUSE_MS share it.
 */
export function createDatabaseProbe(pool: Pool, now: () => number = Date.now) {
  const expected = MIGRATIONS[MIGRATIONS.length - 1]!.version;
  let last: { at: number; state: DatabaseState } | undefined;
  let running: Promise<DatabaseState> | undefined;

  async function probe(): Promise<DatabaseState> {
    const started = now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
    });
    try {
      const { rows } = await Promise.race([
        pool.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations'),
        timeout,
      ]);
      const schema = rows[0]?.v ?? 0;
      if (schema !== expected) {
        return {
          ok: false,
          reason: 'schema',
          message: `the database is at schema ${schema}, this central at ${expected}`,
        };
      }
      return { ok: true, schema, latencyMs: now() - started };
    } catch (err) {
      return { ok: false, reason: 'unreachable', message: `the database does not answer: ${(err as Error).message}` };
    } finally {
      clearTimeout(timer);
    }
  }

  return (): Promise<DatabaseState> => {
    if (last && now() - last.at < PROBE_REUSE_MS) return Promise.resolve(last.state);
    running ??= probe()
      .then((state) => {
        last = { at: now(), state };
        return state;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}
