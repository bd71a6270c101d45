import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openEmbedded, type EmbeddedDatabase } from './embedded.js';
import { migrate, MIGRATIONS, SchemaError } from './migrate.js';
import { ensurePartitions } from './partitions.js';
import { createPool, type Pool } from './pool.js';

// Two databases in one cluster, so that no test depends on what another migrated: `pool`, empty, for the test
// that migrates step by step; `migrated`, at the latest schema, for the others.
let pg: EmbeddedDatabase;
let pool: Pool;
let migrated: Pool;
beforeAll(async () => {
  pg = await openEmbedded(mkdtempSync(join(tmpdir(), 'vb-central-db-')), 'serve');
  pool = createPool(pg.url, 3);
  await pool.query('CREATE DATABASE migrated');
  const url = new URL(pg.url);
  url.pathname = '/migrated';
  migrated = createPool(url.toString(), 3);
  await migrate(migrated);
});
afterAll(async () => {
  await pool.end();
  await migrated.end();
  await pg.stop();
});

test('migrates a new database once, records the version, and runs again as a no-op', async () => {
  const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
  expect(await migrate(pool, 1)).toEqual({ from: 0, to: 1 });
  await atSchema1();
  expect(await migrate(pool)).toEqual({ from: 1, to: latest });
  expect(await migrate(pool)).toEqual({ from: latest, to: latest });
  const { rows } = await pool.query('SELECT version FROM schema_migrations ORDER BY version');
  expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
  await afterSchema2();
  await afterSchema3();
  await afterSchema4();
  await afterSchema6();
  await afterSchema8();
  await afterSchema9();
});

/** Rows as a central at schema 1 wrote them: a device with a head, and a balance past the safe range. */
async function atSchema1(): Promise<void> {
  await pool.query(`INSERT INTO tenants (tenant_id, name) VALUES ('t', 'T')`);
  await pool.query(`INSERT INTO venues (tenant_id, venue_id, name, document) VALUES ('t', 'v', 'V', '{}')`);
  await pool.query(`INSERT INTO devices (tenant_id, device_id, venue_id, public_key, key_id, head_epoch, head_seq, head_hash)
                    VALUES ('t', 'd', 'v', '\\x00', 'k', 1, 7, 'h7')`);
  await pool.query(`INSERT INTO stock_balances (tenant_id, warehouse_id, item_id, unit, qty_micro)
                    VALUES ('t', 'w', 'old', 'kg', 18014398509481982), ('t', 'w', 'fine', 'kg', 5)`);
}

/** Migration 2: heads keep their place with no proof yet; old balances stay, new ones stay in the safe range. */
async function afterSchema2(): Promise<void> {
  const device = await pool.query(
    `SELECT head_seq, head_hash, head_header, head_signature FROM devices WHERE device_id = 'd'`,
  );
  expect(device.rows).toEqual([{ head_seq: 7, head_hash: 'h7', head_header: null, head_signature: null }]);
  const balances = await pool.query(
    `SELECT item_id, qty_micro::text AS qty FROM stock_balances WHERE tenant_id = 't' ORDER BY item_id`,
  );
  expect(balances.rows).toEqual([
    { item_id: 'fine', qty: '5' },
    { item_id: 'old', qty: '18014398509481982' },
  ]);
  await expect(
    pool.query(`UPDATE stock_balances SET qty_micro = 9007199254740992 WHERE item_id = 'fine'`),
  ).rejects.toMatchObject({
    constraint: 'stock_balances_qty_safe',
  });
  await pool.query(`UPDATE stock_balances SET qty_micro = -9007199254740991 WHERE item_id = 'fine'`);
}

/** Migration 3: a tenant gets its catalogue counter at rev 0; rows written before are not the catalogue's (rev 0). */
async function afterSchema3(): Promise<void> {
  expect((await pool.query(`SELECT tenant_id, rev, purged_rev FROM catalogue_revs`)).rows).toEqual([
    { tenant_id: 't', rev: 0, purged_rev: 0 },
  ]);
  expect((await pool.query(`SELECT venue_id, rev, retired_at FROM venues`)).rows).toEqual([
    { venue_id: 'v', rev: 0, retired_at: null },
  ]);
}

/** Migration 4: devices start with cursor 0 (nothing acknowledged); an entry names a venue of its tenant. */
async function afterSchema4(): Promise<void> {
  expect((await pool.query(`SELECT device_id, catalogue_rev FROM devices`)).rows).toEqual([
    { device_id: 'd', catalogue_rev: 0 },
  ]);
  await pool.query(
    `INSERT INTO hq_inbox (tenant_id, entry_id, venue_id, kind, body, rev, created_by) VALUES ('t', 'e', 'v', 'order', '{}', 1, 'u')`,
  );
  await expect(
    pool.query(
      `INSERT INTO hq_inbox (tenant_id, entry_id, venue_id, kind, body, rev, created_by) VALUES ('t', 'f', 'nowhere', 'order', '{}', 2, 'u')`,
    ),
  ).rejects.toMatchObject({ code: '23503' });
  await expect(
    pool.query(
      `INSERT INTO hq_inbox (tenant_id, entry_id, venue_id, kind, body, rev, created_by) VALUES ('t', 'g', 'v', 'letter', '{}', 3, 'u')`,
    ),
  ).rejects.toMatchObject({ code: '23514' });
}

/** Migration 6: devices have said nothing of their program yet; a tenant has at most one current rollout. */
async function afterSchema6(): Promise<void> {
  expect((await pool.query(`SELECT program_version, update_report, update_at FROM devices`)).rows).toEqual([
    { program_version: null, update_report: null, update_at: null },
  ]);
  const rollout = (id: string, state: string) =>
    pool.query(
      `INSERT INTO rollouts (tenant_id, rollout_id, version, selection, starts_at, install_window, stages, stage_minutes,
         halt_share, stage_started_at, state, created_by)
       VALUES ('t', $1, '1.0.0', '{"all":true}', now(), '"closed"', '[100]', 0, 0.2, now(), $2, 'u')`,
      [id, state],
    );
  await rollout('r1', 'superseded');
  await rollout('r2', 'active');
  await expect(rollout('r3', 'halted')).rejects.toMatchObject({ code: '23505' });
  await expect(
    pool.query(
      `INSERT INTO releases (tenant_id, version, arch, signed, sha256, size, received, uploaded_by)
       VALUES ('t', '1.0.0', 'x64', '{}', 'h', 10, 11, 'u')`,
    ),
  ).rejects.toMatchObject({ code: '23514' });
}

/** Migration 8: no box has said when its oldest unsent event was written; a rev has at most one author. */
async function afterSchema8(): Promise<void> {
  expect((await pool.query(`SELECT device_id, oldest_pending_at FROM devices`)).rows).toEqual([
    { device_id: 'd', oldest_pending_at: null },
  ]);
  await pool.query(`INSERT INTO catalogue_authors (tenant_id, rev, user_id) VALUES ('t', 1, 'u')`);
  await expect(
    pool.query(`INSERT INTO catalogue_authors (tenant_id, rev, user_id) VALUES ('t', 1, 'w')`),
  ).rejects.toMatchObject({ code: '23505' });
}

/** Migration 9: no device holds a standby lease yet; a lease is stored whole or not at all. */
async function afterSchema9(): Promise<void> {
  expect((await pool.query(`SELECT device_id, standby_term, standby_holder, standby_until FROM devices`)).rows).toEqual(
    [{ device_id: 'd', standby_term: null, standby_holder: null, standby_until: null }],
  );
  await expect(pool.query(`UPDATE devices SET standby_term = 1 WHERE device_id = 'd'`)).rejects.toMatchObject({
    code: '23514',
  });
  await expect(
    pool.query(
      `UPDATE devices SET standby_term = -1, standby_holder = gen_random_uuid(), standby_until = now() WHERE device_id = 'd'`,
    ),
  ).rejects.toMatchObject({ code: '23514' });
}

test('every primary key and unique constraint starts with tenant_id (Citus distribution by tenant)', async () => {
  // The central's own tables, no tenant's data: reference tables on Citus.
  const { rows } = await migrated.query<{ table: string; def: string }>(
    `SELECT conrelid::regclass::text AS table, pg_get_constraintdef(oid) AS def FROM pg_constraint
     WHERE contype IN ('p', 'u') AND connamespace = 'public'::regnamespace
       AND conrelid::regclass::text NOT IN ('schema_migrations', 'signing_keys')`,
  );
  expect(rows.length).toBeGreaterThan(10);
  for (const r of rows) expect(r.def, r.table).toMatch(/^(PRIMARY KEY|UNIQUE) \(tenant_id[,)]/);
});

test('raw events land in the partition of their receive month; one for next month exists already', async () => {
  const made = await ensurePartitions(migrated, Date.parse('2026-12-15T00:00:00Z'));
  expect(made).toEqual(['sync_events_y2026m12', 'sync_events_y2027m01']);
  expect(await ensurePartitions(migrated, Date.parse('2026-12-31T23:59:59Z'))).toEqual(made); // idempotent
  await migrated.query(
    `INSERT INTO sync_events (tenant_id, device_id, seq, epoch, envelope, chain_hash, received_at)
     VALUES ('t', 'd', 1, 1, '{}', 'h', '2027-01-02T00:00:00Z'), ('t', 'd', 2, 1, '{}', 'h', '1999-01-01T00:00:00Z')`,
  );
  const { rows } = await migrated.query('SELECT tableoid::regclass::text AS part, seq FROM sync_events ORDER BY seq');
  expect(rows).toEqual([
    { part: 'sync_events_y2027m01', seq: 1 },
    { part: 'sync_events_default', seq: 2 },
  ]);
});

test('a database migrated by a newer central refuses to start', async () => {
  await migrated.query(`INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')`);
  await expect(migrate(migrated)).rejects.toThrow(SchemaError);
  await migrated.query('DELETE FROM schema_migrations WHERE version = 999');
});
