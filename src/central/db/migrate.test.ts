import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openEmbedded, type EmbeddedDatabase } from './embedded.js';
import { migrate, MIGRATIONS, SchemaError } from './migrate.js';
import { ensurePartitions } from './partitions.js';
import { createPool, type Pool } from './pool.js';

let pg: EmbeddedDatabase;
let pool: Pool;
beforeAll(async () => {
  pg = await openEmbedded(mkdtempSync(join(tmpdir(), 'vb-central-db-')), 'serve');
  pool = createPool(pg.url, 3);
});
afterAll(async () => {
  await pool.end();
  await pg.stop();
});

test('migrates a new database once, records the version, and runs again as a no-op', async () => {
  const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
  expect(await migrate(pool)).toEqual({ from: 0, to: latest });
  expect(await migrate(pool)).toEqual({ from: latest, to: latest });
  const { rows } = await pool.query('SELECT version FROM schema_migrations ORDER BY version');
  expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
});

test('every primary key and unique constraint starts with tenant_id (Citus distribution by tenant)', async () => {
  const { rows } = await pool.query<{ table: string; def: string }>(
    `SELECT conrelid::regclass::text AS table, pg_get_constraintdef(oid) AS def FROM pg_constraint
     WHERE contype IN ('p', 'u') AND connamespace = 'public'::regnamespace AND conrelid::regclass::text <> 'schema_migrations'`,
  );
  expect(rows.length).toBeGreaterThan(10);
  for (const r of rows) expect(r.def, r.table).toMatch(/^(PRIMARY KEY|UNIQUE) \(tenant_id[,)]/);
});

test('raw events land in the partition of their receive month; one for next month exists already', async () => {
  const made = await ensurePartitions(pool, Date.parse('2026-12-15T00:00:00Z'));
  expect(made).toEqual(['sync_events_y2026m12', 'sync_events_y2027m01']);
  expect(await ensurePartitions(pool, Date.parse('2026-12-31T23:59:59Z'))).toEqual(made); // idempotent
  await pool.query(
    `INSERT INTO sync_events (tenant_id, device_id, seq, epoch, envelope, chain_hash, received_at)
     VALUES ('t', 'd', 1, 1, '{}', 'h', '2027-01-02T00:00:00Z'), ('t', 'd', 2, 1, '{}', 'h', '1999-01-01T00:00:00Z')`,
  );
  const { rows } = await pool.query('SELECT tableoid::regclass::text AS part, seq FROM sync_events ORDER BY seq');
  expect(rows).toEqual([{ part: 'sync_events_y2027m01', seq: 1 }, { part: 'sync_events_default', seq: 2 }]);
});

test('a database migrated by a newer central refuses to start', async () => {
  await pool.query(`INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')`);
  await expect(migrate(pool)).rejects.toThrow(SchemaError);
  await pool.query('DELETE FROM schema_migrations WHERE version = 999');
});
