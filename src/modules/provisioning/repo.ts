import type { Db } from '../../db/open.js';

/** SQL of provisioning: upserts keyed by id, so applying a file twice changes nothing. */
export function createProvisioningRepo(db: Db) {
  const stmts = {
    tenant: db.prepare(
      'INSERT INTO tenants (id, name) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name',
    ),
    client: db.prepare(
      `INSERT INTO oauth_clients (tenant_id, client_id, secret_hash) VALUES (?, ?, ?)
       ON CONFLICT (tenant_id, client_id) DO UPDATE SET secret_hash = excluded.secret_hash`,
    ),
    user: db.prepare(
      `INSERT INTO staff_users (tenant_id, id, username, password_hash, scope) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, id) DO UPDATE SET username = excluded.username,
         password_hash = excluded.password_hash, scope = excluded.scope`,
    ),
    warehouse: db.prepare(
      `INSERT INTO warehouses (tenant_id, id, name) VALUES (?, ?, ?)
       ON CONFLICT (tenant_id, id) DO UPDATE SET name = excluded.name`,
    ),
    menu: db.prepare(
      `INSERT INTO menus (tenant_id, id, root_json) VALUES (?, ?, ?)
       ON CONFLICT (tenant_id, id) DO UPDATE SET root_json = excluded.root_json`,
    ),
    clearProducts: db.prepare('DELETE FROM products WHERE tenant_id = ? AND menu_id = ?'),
    product: db.prepare(
      `INSERT INTO products (tenant_id, menu_id, id, name, price_minor, channels, snapshot_json)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    venue: db.prepare(
      `INSERT INTO venues (tenant_id, id, menu_id, warehouse_id, lat, lng, venue_json) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, id) DO UPDATE SET menu_id = excluded.menu_id, warehouse_id = excluded.warehouse_id,
         lat = excluded.lat, lng = excluded.lng, venue_json = excluded.venue_json`,
    ),
    getMeta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
    setMeta: db.prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
  };
  return {
    upsertTenant: (id: string, name: string) => stmts.tenant.run(id, name),
    upsertClient: (tenantId: string, clientId: string, hash: string) => stmts.client.run(tenantId, clientId, hash),
    upsertUser: (tenantId: string, id: string, username: string, hash: string, scope: string) =>
      stmts.user.run(tenantId, id, username, hash, scope),
    upsertWarehouse: (tenantId: string, id: string, name: string) => stmts.warehouse.run(tenantId, id, name),
    upsertMenu: (tenantId: string, id: string, rootJson: string) => {
      stmts.menu.run(tenantId, id, rootJson);
      stmts.clearProducts.run(tenantId, id);
    },
    insertProduct: (p: {
      tenantId: string;
      menuId: string;
      id: string;
      name: string;
      priceMinor: number;
      channels: string | null;
      snapshotJson: string;
    }) => stmts.product.run(p.tenantId, p.menuId, p.id, p.name, p.priceMinor, p.channels, p.snapshotJson),
    upsertVenue: (
      tenantId: string,
      v: { id: string; menu: string; warehouse: string; lat: number; lng: number },
      json: string,
    ) => stmts.venue.run(tenantId, v.id, v.menu, v.warehouse, v.lat, v.lng, json),
    meta: (key: string): string | undefined => stmts.getMeta.get(key)?.value,
    setMeta: (key: string, value: string) => stmts.setMeta.run(key, value),
    transaction: <T>(fn: () => T): T => db.transaction(fn).immediate(),
  };
}
export type ProvisioningRepo = ReturnType<typeof createProvisioningRepo>;
