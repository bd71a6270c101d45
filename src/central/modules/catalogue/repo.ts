import type { CatalogueItem, ItemType } from '../../../shared/catalogue-items.js';
import type { Queryable } from '../../db/pool.js';

/**
 * Every catalogue row as (type, id, rev, retired, data), the data in the shape the box receives
 * (src/shared/catalogue-protocol.ts ItemData). $1 tenant, $2 "rev greater than", $3 live rows only.
 */
const ROWS = `
SELECT 'tenant' AS type, tenant_id AS id, rev, false AS retired, jsonb_build_object('id', tenant_id, 'name', name) AS data
  FROM tenants WHERE tenant_id = $1 AND rev > $2
UNION ALL SELECT 'client', client_id, rev, retired_at IS NOT NULL, jsonb_build_object('clientId', client_id, 'secretHash', secret_hash)
  FROM oauth_clients WHERE tenant_id = $1 AND rev > $2 AND NOT ($3 AND retired_at IS NOT NULL)
UNION ALL SELECT 'user', user_id, rev, retired_at IS NOT NULL,
    jsonb_build_object('id', user_id, 'username', username, 'passwordHash', password_hash, 'scope', scope)
  FROM staff_users WHERE tenant_id = $1 AND rev > $2 AND NOT ($3 AND retired_at IS NOT NULL)
UNION ALL SELECT 'warehouse', warehouse_id, rev, retired_at IS NOT NULL, jsonb_build_object('id', warehouse_id, 'name', name)
  FROM warehouses WHERE tenant_id = $1 AND rev > $2 AND NOT ($3 AND retired_at IS NOT NULL)
UNION ALL SELECT 'menu', menu_id, rev, retired_at IS NOT NULL, jsonb_build_object('id', menu_id, 'root', root)
  FROM menus WHERE tenant_id = $1 AND rev > $2 AND NOT ($3 AND retired_at IS NOT NULL)
UNION ALL SELECT 'venue', venue_id, rev, retired_at IS NOT NULL, document
  FROM venues WHERE tenant_id = $1 AND rev > $2 AND NOT ($3 AND retired_at IS NOT NULL)
UNION ALL SELECT 'soldOut', venue_id || '/' || product_id, rev, retired_at IS NOT NULL,
    jsonb_build_object('venue', venue_id, 'productId', product_id, 'reason', reason)
  FROM hq_sold_out WHERE tenant_id = $1 AND rev > $2 AND NOT ($3 AND retired_at IS NOT NULL)
ORDER BY rev`;

type Row = { type: ItemType; id: string; rev: number; retired: boolean; data: Record<string, unknown> };
const item = (r: Row): CatalogueItem =>
  (r.retired
    ? { type: r.type, id: r.id, rev: r.rev, retired: true }
    : { type: r.type, id: r.id, rev: r.rev, retired: false, data: r.data }) as CatalogueItem;

/**
 * SQL of the catalogue. Upserts write only when something differs (or the row was retired, or not yet the
 * catalogue's: rev 0), and say whether they wrote: a change that changes nothing takes no rev.
 */
export function createCatalogueRepo(db: Queryable) {
  const changed = async (sql: string, params: unknown[]): Promise<boolean> =>
    ((await db.query(sql, params)).rowCount ?? 0) > 0;
  return {
    /** The tenant's next rev; locks its counter row until COMMIT, so the tenant's changes commit in rev order. */
    async nextRev(tenantId: string): Promise<number> {
      const { rows } = await db.query<{ rev: number }>(
        `INSERT INTO catalogue_revs (tenant_id, rev) VALUES ($1, 1)
         ON CONFLICT (tenant_id) DO UPDATE SET rev = catalogue_revs.rev + 1 RETURNING rev`,
        [tenantId],
      );
      return rows[0]!.rev;
    },
    async position(tenantId: string): Promise<{ rev: number; purgedRev: number }> {
      const { rows } = await db.query<{ rev: number; purged_rev: number }>(
        'SELECT rev, purged_rev FROM catalogue_revs WHERE tenant_id = $1',
        [tenantId],
      );
      return { rev: rows[0]?.rev ?? 0, purgedRev: rows[0]?.purged_rev ?? 0 };
    },
    /** Rows changed after `after` (tombstones included), or with `liveOnly` every live row of the catalogue. */
    async items(tenantId: string, after: number, liveOnly: boolean): Promise<CatalogueItem[]> {
      return (await db.query<Row>(ROWS, [tenantId, after, liveOnly])).rows.map(item);
    },
    /** Tells other centrals and this one's waiting boxes, at COMMIT (PostgreSQL delivers NOTIFY then). */
    async notify(tenantId: string): Promise<void> {
      await db.query("SELECT pg_notify('catalogue', $1)", [tenantId]);
    },
    tenant: (id: string, name: string, rev: number) =>
      changed(
        `INSERT INTO tenants (tenant_id, name, rev) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id) DO UPDATE SET name = EXCLUDED.name, rev = EXCLUDED.rev
       WHERE tenants.name IS DISTINCT FROM EXCLUDED.name OR tenants.rev = 0`,
        [id, name, rev],
      ),
    client: (tenantId: string, clientId: string, secretHash: string, rev: number) =>
      changed(
        `INSERT INTO oauth_clients (tenant_id, client_id, secret_hash, rev) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, client_id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, rev = EXCLUDED.rev, retired_at = NULL
       WHERE oauth_clients.secret_hash IS DISTINCT FROM EXCLUDED.secret_hash OR oauth_clients.rev = 0 OR oauth_clients.retired_at IS NOT NULL`,
        [tenantId, clientId, secretHash, rev],
      ),
    user: (tenantId: string, u: { id: string; username: string; passwordHash: string; scope: string }, rev: number) =>
      changed(
        `INSERT INTO staff_users (tenant_id, user_id, username, password_hash, scope, rev) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tenant_id, user_id) DO UPDATE SET username = EXCLUDED.username, password_hash = EXCLUDED.password_hash,
         scope = EXCLUDED.scope, rev = EXCLUDED.rev, retired_at = NULL
       WHERE (staff_users.username, staff_users.password_hash, staff_users.scope) IS DISTINCT FROM
         (EXCLUDED.username, EXCLUDED.password_hash, EXCLUDED.scope) OR staff_users.retired_at IS NOT NULL`,
        [tenantId, u.id, u.username, u.passwordHash, u.scope, rev],
      ),
    warehouse: (tenantId: string, w: { id: string; name: string }, rev: number) =>
      changed(
        `INSERT INTO warehouses (tenant_id, warehouse_id, name, rev) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, warehouse_id) DO UPDATE SET name = EXCLUDED.name, rev = EXCLUDED.rev, retired_at = NULL
       WHERE warehouses.name IS DISTINCT FROM EXCLUDED.name OR warehouses.rev = 0 OR warehouses.retired_at IS NOT NULL`,
        [tenantId, w.id, w.name, rev],
      ),
    menu: (tenantId: string, menuId: string, root: unknown, rev: number) =>
      changed(
        `INSERT INTO menus (tenant_id, menu_id, root, rev) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, menu_id) DO UPDATE SET root = EXCLUDED.root, rev = EXCLUDED.rev, retired_at = NULL
       WHERE menus.root IS DISTINCT FROM EXCLUDED.root OR menus.retired_at IS NOT NULL`,
        [tenantId, menuId, JSON.stringify(root), rev],
      ),
    venue: (tenantId: string, v: { id: string; name: string }, rev: number) =>
      changed(
        `INSERT INTO venues (tenant_id, venue_id, name, document, rev) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, venue_id) DO UPDATE SET name = EXCLUDED.name, document = EXCLUDED.document, rev = EXCLUDED.rev,
         retired_at = NULL
       WHERE venues.document IS DISTINCT FROM EXCLUDED.document OR venues.rev = 0 OR venues.retired_at IS NOT NULL`,
        [tenantId, v.id, v.name, JSON.stringify(v), rev],
      ),
    soldOut: (tenantId: string, venueId: string, productId: string, reason: string, rev: number) =>
      changed(
        `INSERT INTO hq_sold_out (tenant_id, venue_id, product_id, reason, rev) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, venue_id, product_id) DO UPDATE SET reason = EXCLUDED.reason, rev = EXCLUDED.rev, retired_at = NULL
       WHERE hq_sold_out.reason IS DISTINCT FROM EXCLUDED.reason OR hq_sold_out.retired_at IS NOT NULL`,
        [tenantId, venueId, productId, reason, rev],
      ),
    /** Makes a live row a tombstone at `rev`; false when there is no live row. */
    retire: (type: Exclude<ItemType, 'tenant' | 'soldOut'>, tenantId: string, id: string, rev: number) =>
      changed(
        `UPDATE ${TABLES[type].table} SET retired_at = now(), rev = $3 WHERE tenant_id = $1 AND ${TABLES[type].key} = $2 AND retired_at IS NULL`,
        [tenantId, id, rev],
      ),
    clearSoldOut: (tenantId: string, venueId: string, productId: string, rev: number) =>
      changed(
        `UPDATE hq_sold_out SET retired_at = now(), rev = $4
       WHERE tenant_id = $1 AND venue_id = $2 AND product_id = $3 AND retired_at IS NULL`,
        [tenantId, venueId, productId, rev],
      ),
    /** A live row's data (headquarters' API reads before it writes: a menu's tree for a price change, a user's hash). */
    async live(type: ItemType, tenantId: string, id: string): Promise<Record<string, unknown> | undefined> {
      const { rows } = await db.query<Row>(`SELECT * FROM (${ROWS}) r WHERE type = $4 AND id = $5 AND NOT retired`, [
        tenantId,
        0,
        true,
        type,
        id,
      ]);
      return rows[0]?.data;
    },
    /**
     * The rev of a live row of the catalogue (what GET /hq-api/api/catalogue shows), or 0 when there is none:
     * never written through the catalogue (rev 0), retired, or unknown. If-Match compares with it.
     */
    async revOf(type: ItemType, tenantId: string, id: string): Promise<number> {
      const { rows } = await db.query<{ rev: number }>(
        `SELECT rev FROM (${ROWS}) r WHERE type = $4 AND id = $5 AND NOT retired`,
        [tenantId, 0, true, type, id],
      );
      return rows[0]?.rev ?? 0;
    },
    /** Live menus, their trees (a price set everywhere reads them after the counter is locked). */
    async liveMenus(tenantId: string): Promise<{ id: string; root: unknown }[]> {
      const { rows } = await db.query<{ menu_id: string; root: unknown }>(
        'SELECT menu_id, root FROM menus WHERE tenant_id = $1 AND retired_at IS NULL ORDER BY menu_id',
        [tenantId],
      );
      return rows.map((r) => ({ id: r.menu_id, root: r.root }));
    },
    /** The headquarters user who made a rev through the API (written in the rev's own transaction). */
    async recordAuthor(tenantId: string, rev: number, userId: string): Promise<void> {
      await db.query('INSERT INTO catalogue_authors (tenant_id, rev, user_id) VALUES ($1, $2, $3)', [
        tenantId,
        rev,
        userId,
      ]);
    },
    /** The username of a rev's author; undefined for a rev of an import, or of a user since removed. */
    async authorOf(tenantId: string, rev: number): Promise<string | undefined> {
      const { rows } = await db.query<{ username: string }>(
        `SELECT u.username FROM catalogue_authors a JOIN hq_users u ON u.tenant_id = a.tenant_id AND u.user_id = a.user_id
         WHERE a.tenant_id = $1 AND a.rev = $2`,
        [tenantId, rev],
      );
      return rows[0]?.username;
    },
    /** Live venues naming a menu or warehouse (retiring those is refused while any does). */
    async venuesUsing(tenantId: string, field: 'menu' | 'warehouse', id: string): Promise<string[]> {
      const { rows } = await db.query<{ venue_id: string }>(
        `SELECT venue_id FROM venues WHERE tenant_id = $1 AND retired_at IS NULL AND rev > 0 AND document ->> '${field}' = $2
         ORDER BY venue_id`,
        [tenantId, id],
      );
      return rows.map((r) => r.venue_id);
    },
    /**
     * Removes tombstones retired before `before` (clients, staff users, menus, HQ sold-out flags; venues and
     * warehouses stay, devices and documents name them) and raises each tenant's purged_rev past them.
     */
    async purge(before: Date): Promise<number> {
      const { rows } = await db.query<{ n: number }>(
        `WITH c AS (DELETE FROM oauth_clients WHERE retired_at < $1 RETURNING tenant_id, rev),
              u AS (DELETE FROM staff_users WHERE retired_at < $1 RETURNING tenant_id, rev),
              m AS (DELETE FROM menus WHERE retired_at < $1 RETURNING tenant_id, rev),
              s AS (DELETE FROM hq_sold_out WHERE retired_at < $1 RETURNING tenant_id, rev),
              gone AS (SELECT * FROM c UNION ALL SELECT * FROM u UNION ALL SELECT * FROM m UNION ALL SELECT * FROM s),
              raised AS (UPDATE catalogue_revs r SET purged_rev = greatest(r.purged_rev, g.rev)
                FROM (SELECT tenant_id, max(rev) AS rev FROM gone GROUP BY tenant_id) g WHERE r.tenant_id = g.tenant_id RETURNING 1)
         SELECT (SELECT count(*) FROM gone)::int AS n, (SELECT count(*) FROM raised)::int AS tenants`,
        [before],
      );
      return rows[0]?.n ?? 0;
    },
  };
}

const TABLES = {
  client: { table: 'oauth_clients', key: 'client_id' },
  user: { table: 'staff_users', key: 'user_id' },
  warehouse: { table: 'warehouses', key: 'warehouse_id' },
  menu: { table: 'menus', key: 'menu_id' },
  venue: { table: 'venues', key: 'venue_id' },
} as const;

export type CatalogueRepo = ReturnType<typeof createCatalogueRepo>;
