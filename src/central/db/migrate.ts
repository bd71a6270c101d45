import type { Pool } from './pool.js';
import { inTransaction } from './pool.js';
import { ProcessError } from '../../shared/errors.js';
import { lacksRights } from './start-errors.js';
import { sql as initial } from './migrations/0001-initial.js';
import { sql as headProof } from './migrations/0002-head-proof.js';
import { sql as catalogue } from './migrations/0003-catalogue.js';
import { sql as hqExtras } from './migrations/0004-hq-extras.js';
import { sql as refreshRetry } from './migrations/0005-refresh-retry.js';
import { sql as releases } from './migrations/0006-releases.js';
import { sql as reports } from './migrations/0007-reports.js';
import { sql as consoleSupport } from './migrations/0008-console.js';
import { sql as standbyLease } from './migrations/0009-standby-lease.js';
import { sql as signingKey } from './migrations/0010-signing-key.js';
import { sql as deadLetterRetry } from './migrations/0011-dead-letter-retry.js';
import { sql as deviceSuccessor } from './migrations/0012-device-successor.js';
import { sql as requestNonces } from './migrations/0013-request-nonces.js';

/** Numbered migrations, applied in order; never edit one that shipped, add the next. */
export const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  { version: 1, name: 'initial', sql: initial },
  { version: 2, name: 'head-proof', sql: headProof },
  { version: 3, name: 'catalogue', sql: catalogue },
  { version: 4, name: 'hq-extras', sql: hqExtras },
  { version: 5, name: 'refresh-retry', sql: refreshRetry },
  { version: 6, name: 'releases', sql: releases },
  { version: 7, name: 'reports', sql: reports },
  { version: 8, name: 'console', sql: consoleSupport },
  { version: 9, name: 'standby-lease', sql: standbyLease },
  { version: 10, name: 'signing-key', sql: signingKey },
  { version: 11, name: 'dead-letter-retry', sql: deadLetterRetry },
  { version: 12, name: 'device-successor', sql: deviceSuccessor },
  { version: 13, name: 'request-nonces', sql: requestNonces },
];

/** A database newer than this central: exit 65, not restarted by systemd (docs/operations.md "Exit codes"). */
export class SchemaError extends ProcessError {
  constructor(message: string) {
    super('data', message);
  }
}

// Any constant: serve and the CLI commands may migrate the same database at the same moment.
const MIGRATION_LOCK = 0x7e_57_ce_01;

/**
 * Brings the database to the code's schema in one transaction (all of it or none). A database migrated by a
 * newer central refuses to start: this code would not know its tables. `target` (tests only) stops at an older
 * version, to put rows into the schema a migration starts from.
 */
export async function migrate(pool: Pool, target?: number): Promise<{ from: number; to: number }> {
  try {
    return await migrateOnce(pool, target);
  } catch (err) {
    throw lacksRights(err, 'migrate its schema') ?? err;
  }
}

async function migrateOnce(pool: Pool, target?: number): Promise<{ from: number; to: number }> {
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    // No DDL unless there is something to do: a user without the rights the central needs is then told which
    // ones by the check of the monthly partitions, which comes next (docs/sync.md "Several central processes").
    const exists = await client.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
    if (exists.rows[0]?.t == null) {
      await client.query(`CREATE TABLE schema_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    }
    const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
    const from = rows[0]?.v ?? 0;
    const latest = target ?? MIGRATIONS[MIGRATIONS.length - 1]!.version;
    if (from > latest) {
      throw new SchemaError(
        `the database is at schema ${from}, newer than this central knows (${latest}); run a newer venue-box`,
      );
    }
    for (const m of MIGRATIONS.filter((x) => x.version > from && x.version <= latest)) {
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
    }
    return { from, to: latest };
  });
}
