import type { Queryable } from '../../db/pool.js';

/**
 * SQL of tenants and what belongs to them: OAuth clients, HQ users, venues, warehouses. Clients, venues and
 * warehouses the catalogue holds (rev > 0) are headquarters' (src/central/modules/catalogue): provisioning at
 * start leaves them alone, so a restart never undoes a change made through the HQ API.
 */
export function createTenantRepo(db: Queryable) {
  return {
    async upsertTenant(id: string, name: string): Promise<void> {
      await db.query(
        'INSERT INTO tenants (tenant_id, name) VALUES ($1, $2) ON CONFLICT (tenant_id) DO UPDATE SET name = EXCLUDED.name',
        [id, name],
      );
    },
    async tenantIds(): Promise<string[]> {
      return (await db.query<{ tenant_id: string }>('SELECT tenant_id FROM tenants ORDER BY tenant_id')).rows.map(
        (r) => r.tenant_id,
      );
    },
    async tenantExists(id: string): Promise<boolean> {
      return (await db.query('SELECT 1 FROM tenants WHERE tenant_id = $1', [id])).rowCount === 1;
    },
    async clientHash(tenantId: string, clientId: string): Promise<string | undefined> {
      const { rows } = await db.query<{ secret_hash: string }>(
        'SELECT secret_hash FROM oauth_clients WHERE tenant_id = $1 AND client_id = $2 AND retired_at IS NULL',
        [tenantId, clientId],
      );
      return rows[0]?.secret_hash;
    },
    async putClient(tenantId: string, clientId: string, secretHash: string): Promise<void> {
      await db.query(
        `INSERT INTO oauth_clients (tenant_id, client_id, secret_hash) VALUES ($1, $2, $3)
         ON CONFLICT (tenant_id, client_id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash WHERE oauth_clients.rev = 0`,
        [tenantId, clientId, secretHash],
      );
    },
    async hqUser(tenantId: string, username: string) {
      const { rows } = await db.query<{ user_id: string; password_hash: string; scope: string }>(
        'SELECT user_id, password_hash, scope FROM hq_users WHERE tenant_id = $1 AND username = $2',
        [tenantId, username],
      );
      return rows[0];
    },
    async putHqUser(
      tenantId: string,
      u: { username: string; userId: string; passwordHash: string; scope: string },
    ): Promise<void> {
      await db.query(
        `INSERT INTO hq_users (tenant_id, username, user_id, password_hash, scope) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (tenant_id, username) DO UPDATE SET password_hash = EXCLUDED.password_hash, scope = EXCLUDED.scope`,
        [tenantId, u.username, u.userId, u.passwordHash, u.scope],
      );
    },
    async putVenue(tenantId: string, venue: { id: string; name: string }): Promise<void> {
      await db.query(
        `INSERT INTO venues (tenant_id, venue_id, name, document) VALUES ($1, $2, $3, $4)
         ON CONFLICT (tenant_id, venue_id) DO UPDATE SET name = EXCLUDED.name, document = EXCLUDED.document WHERE venues.rev = 0`,
        [tenantId, venue.id, venue.name, JSON.stringify(venue)],
      );
    },
    async venueExists(tenantId: string, venueId: string): Promise<boolean> {
      return (
        (await db.query('SELECT 1 FROM venues WHERE tenant_id = $1 AND venue_id = $2', [tenantId, venueId]))
          .rowCount === 1
      );
    },
    /** A venue headquarters may enrol a box for: the tenant's, and not retired. */
    async liveVenueExists(tenantId: string, venueId: string): Promise<boolean> {
      const { rowCount } = await db.query(
        'SELECT 1 FROM venues WHERE tenant_id = $1 AND venue_id = $2 AND retired_at IS NULL',
        [tenantId, venueId],
      );
      return rowCount === 1;
    },
    /** The central's tenant when it has exactly one (the console's sign-in then needs no tenant); else undefined. */
    async onlyTenant(): Promise<{ id: string; name: string } | undefined> {
      const { rows } = await db.query<{ tenant_id: string; name: string }>(
        'SELECT tenant_id, name FROM tenants ORDER BY tenant_id LIMIT 2',
      );
      return rows.length === 1 ? { id: rows[0]!.tenant_id, name: rows[0]!.name } : undefined;
    },
    async putWarehouse(tenantId: string, w: { id: string; name: string }): Promise<void> {
      await db.query(
        `INSERT INTO warehouses (tenant_id, warehouse_id, name) VALUES ($1, $2, $3)
         ON CONFLICT (tenant_id, warehouse_id) DO UPDATE SET name = EXCLUDED.name WHERE warehouses.rev = 0`,
        [tenantId, w.id, w.name],
      );
    },
    async warehouseName(tenantId: string, warehouseId: string): Promise<string | undefined> {
      const { rows } = await db.query<{ name: string }>(
        'SELECT name FROM warehouses WHERE tenant_id = $1 AND warehouse_id = $2',
        [tenantId, warehouseId],
      );
      return rows[0]?.name;
    },
  };
}

export type TenantRepo = ReturnType<typeof createTenantRepo>;
