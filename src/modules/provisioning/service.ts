import { createHash } from 'node:crypto';
import { parseMoney } from '../../shared/money.js';
import { compile } from '../../shared/validate.js';
import { hashSecret } from '../../shared/passwords.js';
import { isProduct, type MenuNode, type Product } from '../menus/schemas.js';
import type { ProvisioningRepo } from './repo.js';
import { Provisioning, type TenantSpec } from './schemas.js';

export class ProvisioningError extends Error {}

const validate = compile(Provisioning);

/** Staff user ids are derived from tenant and username so re-provisioning keeps the same id. */
export function staffUserId(tenantId: string, username: string): string {
  const h = createHash('sha256').update(`staff\0${tenantId}\0${username}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Applies a provisioning document (upserts by id, in one transaction). A document already applied under
 * the same name with the same content is skipped, so restarting never duplicates or rewrites data.
 */
export function applyProvisioning(repo: ProvisioningRepo, name: string, document: unknown): 'applied' | 'unchanged' {
  let spec: Provisioning;
  try {
    spec = validate(document);
  } catch (err) {
    const codes = (err as { codes?: { message: string }[] }).codes ?? [];
    throw new ProvisioningError(`provisioning ${name} is invalid: ${codes.map((c) => c.message).join('; ')}`);
  }
  const digest = createHash('sha256').update(JSON.stringify(spec)).digest('hex');
  const key = `provisioned:${name}`;
  if (repo.meta(key) === digest) return 'unchanged';
  for (const tenant of spec.tenants) checkReferences(tenant);
  // Hash secrets before the transaction: scrypt is slow and must not hold the write lock.
  const hashed = spec.tenants.map((t) => ({
    clients: t.clients.map((c) => hashSecret(c.clientSecret)),
    users: t.users.map((u) => hashSecret(u.password)),
  }));
  repo.transaction(() => {
    spec.tenants.forEach((tenant, i) => writeTenant(repo, tenant, hashed[i]!));
    repo.setMeta(key, digest);
  });
  return 'applied';
}

function checkReferences(tenant: TenantSpec): void {
  const menus = new Set(tenant.menus.map((m) => m.id));
  const warehouses = new Set(tenant.warehouses.map((w) => w.id));
  for (const venue of tenant.venues) {
    if (!menus.has(venue.menu)) throw new ProvisioningError(`venue ${venue.id} names unknown menu ${venue.menu}`);
    if (!warehouses.has(venue.warehouse)) {
      throw new ProvisioningError(`venue ${venue.id} names unknown warehouse ${venue.warehouse}`);
    }
  }
  for (const menu of tenant.menus) {
    const ids = productsOf(menu.root as MenuNode).map((p) => p.id);
    const dup = ids.find((id, i) => ids.indexOf(id) !== i);
    if (dup) throw new ProvisioningError(`menu ${menu.id} lists product ${dup} twice`);
  }
}

function writeTenant(repo: ProvisioningRepo, tenant: TenantSpec, hashed: { clients: string[]; users: string[] }): void {
  repo.upsertTenant(tenant.id, tenant.name);
  tenant.clients.forEach((c, i) => repo.upsertClient(tenant.id, c.clientId, hashed.clients[i]!));
  tenant.users.forEach((u, i) =>
    repo.upsertUser(tenant.id, staffUserId(tenant.id, u.username), u.username, hashed.users[i]!, u.scope),
  );
  for (const w of tenant.warehouses) repo.upsertWarehouse(tenant.id, w.id, w.name);
  for (const menu of tenant.menus) {
    repo.upsertMenu(tenant.id, menu.id, JSON.stringify(menu.root));
    for (const p of productsOf(menu.root as MenuNode)) {
      repo.insertProduct({
        tenantId: tenant.id, menuId: menu.id, id: p.id, name: p.details.literals.name ?? p.id,
        priceMinor: parseMoney(p.price), channels: p.channels ? p.channels.join(',') : null,
        snapshotJson: JSON.stringify(productSnapshot(p)),
      });
    }
  }
  for (const v of tenant.venues) {
    repo.upsertVenue(tenant.id, { ...v, lat: v.geoPosition.lat, lng: v.geoPosition.lng }, JSON.stringify(v));
  }
}

export function productsOf(node: MenuNode): Product[] {
  return isProduct(node) ? [node] : node.items.flatMap(productsOf);
}

/** The product snapshot an order line carries (interface.md "Order line"). */
function productSnapshot(p: Product) {
  return {
    kind: 'product',
    id: p.id,
    literals: { name: p.details.literals.name ?? p.id },
    img: p.details.media.find((m) => m.name === 'MAIN_IMG')?.url ?? '',
    quantity: '1',
    price: p.price,
    extra: { ...p._ },
  };
}
