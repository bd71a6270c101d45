import pg from 'pg';
import type { Logger } from '../../../log.js';
import { MIGRATIONS } from '../../db/migrate.js';

export type DatabaseState =
  | { ok: true; schema: number; latencyMs: number }
  | { ok: false; reason: 'unreachable' | 'schema'; message: string };

/** A probe longer than this counts as unreachable: a balancer's health check must get its answer in time. */
const PROBE_TIMEOUT_MS = 2000;
/** Answers within this long of a probe reuse it: N balancers checking every second cost one query. */
const PROBE_REUSE_MS = 1000;

/**
 * Whether this process can serve: its database answers, at the schema this code knows (docs/sync.md "Several
 * central processes": the balancer's health check). On a connection of its own, not the pool's: a pool full of
 * batches is busy (429s), not unready, and a probe never waits behind them. One probe at a time; answers within
 * PROBE_REUSE_MS share it. The answer names no host, user or server message (the route needs no token); the
 * log has them. `up` false (the embedded cluster died and is being started again: src/central/db/cluster-watch.ts)
 * is unready at once, without a probe, and the next probe after it is a fresh one.
 */
export function createDatabaseProbe(url: string, log: Logger, o: { now?: () => number; up?: () => boolean } = {}) {
  const now = o.now ?? Date.now;
  const up = o.up ?? (() => true);
  const expected = MIGRATIONS[MIGRATIONS.length - 1]!.version;
  let client: pg.Client | undefined;
  let last: { at: number; state: DatabaseState } | undefined;
  let running: Promise<DatabaseState> | undefined;
  let closed = false;

  async function connected(): Promise<pg.Client> {
    if (client) return client;
    const c = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: PROBE_TIMEOUT_MS,
      query_timeout: PROBE_TIMEOUT_MS,
      keepAlive: true,
    });
    // A connection the server ends between probes: forgotten, the next probe connects again.
    c.on('error', () => {
      if (client === c) client = undefined;
    });
    await c.connect();
    if (closed) {
      await c.end();
      throw new Error('stopping');
    }
    client = c;
    return c;
  }

  async function probe(): Promise<DatabaseState> {
    const started = now();
    try {
      const c = await connected();
      const { rows } = await c.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
      const schema = rows[0]?.v ?? 0;
      if (schema !== expected) {
        const message = `the database is at schema ${schema}, this central at ${expected}`;
        return { ok: false, reason: 'schema', message };
      }
      return { ok: true, schema, latencyMs: now() - started };
    } catch (err) {
      const stale = client;
      client = undefined;
      await stale?.end().catch(() => undefined);
      if (last?.state.ok !== false)
        log.warn({ err: (err as Error).message }, 'readiness: the database does not answer');
      return {
        ok: false,
        reason: 'unreachable',
        message: 'the database is unreachable or did not answer in time',
      };
    }
  }

  return {
    state(): Promise<DatabaseState> {
      if (!up()) {
        last = undefined;
        return Promise.resolve({
          ok: false,
          reason: 'unreachable',
          message: 'the database is down and being started again',
        });
      }
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
    },
    async close(): Promise<void> {
      closed = true;
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
