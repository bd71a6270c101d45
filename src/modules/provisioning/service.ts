import { createHash } from 'node:crypto';
import { parseMoney } from '../../shared/money.js';
import { ProvisioningError } from '../../shared/errors.js';
import { compile } from '../../shared/validate.js';
import { hashSecret } from '../../shared/passwords.js';
import { productsOf, referenceProblems, staffUserId } from '../../shared/catalogue-schemas.js';
import type { MenuNode, Product } from '../menus/schemas.js';
import type { Venue } from '../venues/schemas.js';
import type { ProvisioningRepo } from './repo.js';
import { Provisioning, type TenantSpec } from './schemas.js';

export { productsOf, staffUserId };

const validate = compile(Provisioning);

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
    for (const [i, tenant] of spec.tenants.entries()) writeTenant(repo, tenant, hashed[i]!);
    repo.setMeta(key, digest);
  });
  return 'applied';
}

function checkReferences(tenant: TenantSpec): void {
  const first = referenceProblems(tenant)[0];
  if (first) throw new ProvisioningError(first.message);
}

function writeTenant(repo: ProvisioningRepo, tenant: TenantSpec, hashed: { clients: string[]; users: string[] }): void {
  repo.upsertTenant(tenant.id, tenant.name);
  for (const [i, c] of tenant.clients.entries()) repo.upsertClient(tenant.id, c.clientId, hashed.clients[i]!);
  for (const [i, u] of tenant.users.entries()) {
    repo.upsertUser(tenant.id, staffUserId(tenant.id, u.username), u.username, hashed.users[i]!, u.scope);
  }
  for (const w of tenant.warehouses) repo.upsertWarehouse(tenant.id, w.id, w.name);
  for (const menu of tenant.menus) writeMenu(repo, tenant.id, menu.id, menu.root as MenuNode);
  for (const v of tenant.venues) writeVenue(repo, tenant.id, v);
}

/** A menu tree and its products (the rows orders price from); the menu's old products are replaced. */
export function writeMenu(repo: ProvisioningRepo, tenantId: string, menuId: string, root: MenuNode): void {
  repo.upsertMenu(tenantId, menuId, JSON.stringify(root));
  for (const p of productsOf(root)) {
    repo.insertProduct({
      tenantId,
      menuId,
      id: p.id,
      name: p.details.literals.name ?? p.id,
      priceMinor: parseMoney(p.price),
      channels: p.channels ? p.channels.join(',') : null,
      snapshotJson: JSON.stringify(productSnapshot(p)),
    });
  }
}

export function writeVenue(repo: ProvisioningRepo, tenantId: string, v: Venue): void {
  repo.upsertVenue(tenantId, { ...v, lat: v.geoPosition.lat, lng: v.geoPosition.lng }, JSON.stringify(v));
}

/** The product snapshot an order line carries (docs/sync.md "Down: the catalogue", "How it works": a line keeps its price and product snapshot as sold). */
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
