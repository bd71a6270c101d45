import { type Db, inTransaction } from '../../../db/open.js';
import type { ItemType } from '../../../shared/catalogue-items.js';

export interface CatalogueState {
  tenantId: string | null;
  /** The central's rev this box holds (0: none yet; the first answer is a snapshot). */
  rev: number;
  checksum: string | null;
  appliedMs: number | null;
  lastError: string | null;
  lastErrorMs: number | null;
}

/** Table and key column of each row type the central sends (tenants are keyed by id alone). */
const TABLES = {
  tenant: { table: 'tenants', key: 'id' },
  client: { table: 'oauth_clients', key: 'client_id' },
  user: { table: 'staff_users', key: 'id' },
  warehouse: { table: 'warehouses', key: 'id' },
  menu: { table: 'menus', key: 'id' },
  venue: { table: 'venues', key: 'id' },
} as const;
type Keyed = keyof typeof TABLES;

/**
 * SQL of the catalogue from the central beside what the provisioning repo writes (its upserts write the rows;
 * these mark them as the central's, remove retired ones, and read what the checksum covers).
 */
export function createCatalogueRepo(db: Db) {
  const tx = inTransaction(db);
  const mark = Object.fromEntries(
    Object.entries(TABLES).map(([type, t]) => [
      type,
      t.table === 'tenants'
        ? db.prepare('UPDATE tenants SET cat_rev = ? WHERE id = ?')
        : db.prepare(`UPDATE ${t.table} SET cat_rev = ? WHERE tenant_id = ? AND ${t.key} = ?`),
    ]),
  ) as Partial<Record<Keyed, { run(...args: unknown[]): unknown }>>;
  const remove = {
    client: db.prepare<[string, string]>('DELETE FROM oauth_clients WHERE tenant_id = ? AND client_id = ?'),
    user: db.prepare<[string, string]>('DELETE FROM staff_users WHERE tenant_id = ? AND id = ?'),
    menu: db.prepare<[string, string]>('DELETE FROM menus WHERE tenant_id = ? AND id = ?'),
    venue: db.prepare<[string, string]>('DELETE FROM venues WHERE tenant_id = ? AND id = ?'),
    // Documents name warehouses: a retired one stays, no longer the central's.
    warehouse: db.prepare<[string, string]>('UPDATE warehouses SET cat_rev = NULL WHERE tenant_id = ? AND id = ?'),
  };
  const s = {
    state: db.prepare<
      [],
      {
        tenant_id: string | null;
        rev: number;
        checksum: string | null;
        applied_ms: number | null;
        last_error: string | null;
        last_error_ms: number | null;
      }
    >('SELECT * FROM catalogue_state WHERE id = 1'),
    applied: db.prepare(
      'UPDATE catalogue_state SET tenant_id = ?, rev = ?, checksum = ?, applied_ms = ?, last_error = NULL WHERE id = 1',
    ),
    error: db.prepare('UPDATE catalogue_state SET last_error = ?, last_error_ms = ? WHERE id = 1'),
    clearError: db.prepare('UPDATE catalogue_state SET last_error = NULL WHERE id = 1'),
    soldOut: db.prepare(
      `INSERT INTO hq_sold_out (tenant_id, venue_id, product_id, reason, since_ms, cat_rev) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, venue_id, product_id) DO UPDATE SET reason = excluded.reason, cat_rev = excluded.cat_rev`,
    ),
    clearSoldOut: db.prepare('DELETE FROM hq_sold_out WHERE tenant_id = ? AND venue_id = ? AND product_id = ?'),
    userIds: db.prepare<[string], { id: string }>('SELECT id FROM staff_users WHERE tenant_id = ?'),
    venueIds: db.prepare<[string], { id: string; menu_id: string }>(
      'SELECT id, menu_id FROM venues WHERE tenant_id = ?',
    ),
    tenant: db.prepare<[string], { id: string; name: string }>(
      'SELECT id, name FROM tenants WHERE id = ? AND cat_rev IS NOT NULL',
    ),
    clients: db.prepare<[string], { client_id: string; secret_hash: string }>(
      'SELECT client_id, secret_hash FROM oauth_clients WHERE tenant_id = ? AND cat_rev IS NOT NULL',
    ),
    users: db.prepare<[string], { id: string; username: string; password_hash: string; scope: string }>(
      'SELECT id, username, password_hash, scope FROM staff_users WHERE tenant_id = ? AND cat_rev IS NOT NULL',
    ),
    warehouses: db.prepare<[string], { id: string; name: string }>(
      'SELECT id, name FROM warehouses WHERE tenant_id = ? AND cat_rev IS NOT NULL',
    ),
    menus: db.prepare<[string], { id: string; root_json: string }>(
      'SELECT id, root_json FROM menus WHERE tenant_id = ? AND cat_rev IS NOT NULL',
    ),
    venues: db.prepare<[string], { id: string; venue_json: string }>(
      'SELECT id, venue_json FROM venues WHERE tenant_id = ? AND cat_rev IS NOT NULL',
    ),
    soldOuts: db.prepare<[string], { venue_id: string; product_id: string; reason: string }>(
      'SELECT venue_id, product_id, reason FROM hq_sold_out WHERE tenant_id = ?',
    ),
  };

  return {
    state(): CatalogueState {
      const r = s.state.get()!;
      return {
        tenantId: r.tenant_id,
        rev: r.rev,
        checksum: r.checksum,
        appliedMs: r.applied_ms,
        lastError: r.last_error,
        lastErrorMs: r.last_error_ms,
      };
    },
    setApplied: (tenantId: string, rev: number, checksum: string, nowMs: number) =>
      s.applied.run(tenantId, rev, checksum, nowMs),
    setError: (message: string, nowMs: number) => s.error.run(message.slice(0, 500), nowMs),
    clearError: () => s.clearError.run(),
    /** Marks a row written by the provisioning repo's upsert as the central's, at its rev. */
    mark(type: Keyed, tenantId: string, id: string, rev: number): void {
      if (type === 'tenant') mark.tenant!.run(rev, id);
      else mark[type]!.run(rev, tenantId, id);
    },
    remove: (type: keyof typeof remove, tenantId: string, id: string) => remove[type].run(tenantId, id),
    setSoldOut: (tenantId: string, venueId: string, productId: string, reason: string, rev: number, nowMs: number) =>
      s.soldOut.run(tenantId, venueId, productId, reason, nowMs, rev),
    clearSoldOut: (tenantId: string, venueId: string, productId: string) =>
      s.clearSoldOut.run(tenantId, venueId, productId),
    userIds: (tenantId: string): string[] => s.userIds.all(tenantId).map((r) => r.id),
    venues: (tenantId: string): { id: string; menu: string }[] =>
      s.venueIds.all(tenantId).map((r) => ({ id: r.id, menu: r.menu_id })),
    /** What the checksum covers: the rows the central sent, in the shapes it sends them. */
    liveRows(tenantId: string): { type: ItemType; id: string; data: unknown }[] {
      const t = s.tenant.get(tenantId);
      return [
        ...(t ? [{ type: 'tenant' as const, id: t.id, data: { id: t.id, name: t.name } }] : []),
        ...s.clients.all(tenantId).map((r) => ({
          type: 'client' as const,
          id: r.client_id,
          data: { clientId: r.client_id, secretHash: r.secret_hash },
        })),
        ...s.users.all(tenantId).map((r) => ({
          type: 'user' as const,
          id: r.id,
          data: { id: r.id, username: r.username, passwordHash: r.password_hash, scope: r.scope },
        })),
        ...s.warehouses
          .all(tenantId)
          .map((r) => ({ type: 'warehouse' as const, id: r.id, data: { id: r.id, name: r.name } })),
        ...s.menus.all(tenantId).map((r) => ({
          type: 'menu' as const,
          id: r.id,
          data: { id: r.id, root: JSON.parse(r.root_json) as unknown },
        })),
        ...s.venues
          .all(tenantId)
          .map((r) => ({ type: 'venue' as const, id: r.id, data: JSON.parse(r.venue_json) as unknown })),
        ...s.soldOuts.all(tenantId).map((r) => ({
          type: 'soldOut' as const,
          id: `${r.venue_id}/${r.product_id}`,
          data: { venue: r.venue_id, productId: r.product_id, reason: r.reason },
        })),
      ];
    },
    /** Before a snapshot: the tenant's catalogue rows go (warehouses stay, no longer the central's). */
    clearTenant(tenantId: string): void {
      for (const table of ['oauth_clients', 'staff_users', 'venues', 'menus', 'hq_sold_out']) {
        db.prepare(`DELETE FROM ${table} WHERE tenant_id = ?`).run(tenantId);
      }
      db.prepare('UPDATE warehouses SET cat_rev = NULL WHERE tenant_id = ?').run(tenantId);
    },
    transaction: <T>(fn: () => T): T => tx.immediate(fn),
  };
}
export type CatalogueRepo = ReturnType<typeof createCatalogueRepo>;
