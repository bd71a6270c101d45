import pg from 'pg';
import { AppError } from '../../shared/errors.js';

export type Pool = pg.Pool;
export type Client = pg.PoolClient;
/** What a repo runs its SQL on: the pool, or one client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/** Connections of one central; ingest takes at most POOL_SIZE - 2 of them, so reads always find one. */
export const POOL_SIZE = 10;

// int8 (seq, counts, micro-units) arrives as a string by default; every int8 of this schema is far inside
// Number.MAX_SAFE_INTEGER, so it is parsed as a number for this pool only (not pg's global parsers).
const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export function createPool(connectionString: string, max = POOL_SIZE): Pool {
  const pool = new pg.Pool({ connectionString, max, types, connectionTimeoutMillis: 10_000 });
  // An idle client whose server went away emits 'error' on the pool; unhandled, it would kill the process.
  pool.on('error', () => undefined);
  // So does a checked-out client between two queries (a transaction's JavaScript between its statements) when the
  // server ends its connection, as a restart does: the pool listens only to idle ones. Its next query fails
  // instead, and databaseUnavailable makes that a 503.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Runs `fn` in one transaction on one client: COMMIT when it resolves, ROLLBACK when it throws. */
export async function inTransaction<T>(pool: Pool, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * SQLSTATEs of a server that is going away, not taking connections yet or out of them (PostgreSQL's classes 57,
 * 08 and 53300), and the socket errors of a connection cut while it restarts.
 */
const GONE = /^(57P0[1-3]|08\d{3}|53300|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)$/;

/**
 * A request that failed because the database is busy or away (the pool timed out waiting for a connection, the
 * server restarts or refuses connections) is told to retry: 503 `unavailable` with Retry-After, not a 500.
 */
export function databaseUnavailable(err: unknown): AppError | undefined {
  const e = err as { message?: unknown; code?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : '';
  const code = typeof e?.code === 'string' ? e.code : '';
  const busy =
    /timeout exceeded when trying to connect|Connection terminated|connection error and is not queryable|Client was closed/.test(
      message,
    );
  if (!busy && !GONE.test(code)) return undefined;
  return AppError.of(
    'unavailable',
    "the central's database is busy or unreachable; retry after Retry-After seconds",
    [],
    {
      'Retry-After': '2',
    },
  );
}

/**
 * SQLSTATEs of text the database cannot store: a NUL in `text` (22021), a `\u0000` escape in `jsonb` (22P05), and
 * (22P02 with "type json") JSON that is not JSON to it, such as a lone surrogate's escape.
 */
const UNSTORABLE = /^(22021|22P05)$/;

/**
 * The last guard behind src/http/nul.ts: a statement that failed on text a request carried where nul.ts does not
 * look (a signed body read raw, a header) is the client's 400 `invalidBody`, not a 500. Undefined for any other
 * error.
 */
export function unstorableText(err: unknown): AppError | undefined {
  const e = err as { message?: unknown; code?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : '';
  if (!UNSTORABLE.test(code) && !(code === '22P02' && /type json/.test(message))) return undefined;
  return AppError.of(
    'invalidBody',
    'the request holds text the central does not store (a NUL character or a lone UTF-16 surrogate)',
  );
}
