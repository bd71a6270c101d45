import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type CatalogueItem, ITEM_TYPES } from '../../../shared/catalogue-items.js';
import { type CatalogueResponse, catalogueChecksum } from '../../../shared/catalogue-protocol.js';
import {
  Category,
  duplicateProduct,
  type MenuNode,
  MenuId,
  Scope,
  Username,
  Venue,
} from '../../../shared/catalogue-schemas.js';
import { ProductId, Uuid } from '../../../shared/types.js';
import type { Revocation } from '../../auth/repo.js';
import type { ProvisioningRepo } from '../../provisioning/repo.js';
import { writeMenu, writeVenue } from '../../provisioning/service.js';
import type { OutgoingFrame } from '../../events/event-store.js';
import { menuChanged, type StreamEvent } from '../../../shared/socket-protocol.js';
import type { CatalogueRepo } from './repo.js';

/** A change set this box will not apply: nothing of it was written, the cursor did not move. */
export class CatalogueApplyError extends Error {}
/** The box's checksum after applying differed from the central's: rolled back; the next request asks for a snapshot. */
export class ChecksumMismatch extends CatalogueApplyError {}

const Hash = Type.String({ minLength: 1, maxLength: 300 });
/** Each row's data, checked with the box's own schemas before anything is written. */
const CHECKS = {
  tenant: TypeCompiler.Compile(Type.Object({ id: Uuid, name: Type.String({ minLength: 1 }) })),
  client: TypeCompiler.Compile(Type.Object({ clientId: Type.String({ minLength: 1 }), secretHash: Hash })),
  user: TypeCompiler.Compile(Type.Object({ id: Uuid, username: Username, passwordHash: Hash, scope: Scope })),
  warehouse: TypeCompiler.Compile(Type.Object({ id: Uuid, name: Type.String({ minLength: 1 }) })),
  menu: TypeCompiler.Compile(Type.Object({ id: MenuId, root: Category })),
  venue: TypeCompiler.Compile(Venue),
  soldOut: TypeCompiler.Compile(Type.Object({ venue: Uuid, productId: ProductId, reason: Type.String() })),
};

export interface CatalogueApplyDeps {
  catalogue: CatalogueRepo;
  provisioning: ProvisioningRepo;
  /** Revokes a removed staff user's tokens inside the transaction (auth), and after COMMIT makes it effective. */
  revokeUser(tenantId: string, userId: string): Revocation[];
  /** Likewise for the tokens of OAuth clients no longer on the box (docs/api.md "Token revocation"). */
  revokeGoneClients?(tenantId: string): Revocation[];
  noteRevoked(rows: Revocation[]): void;
  /** Appends a socket frame inside the transaction; pushed after COMMIT. */
  menuChanged(tenantId: string, venueId: string, event: StreamEvent): OutgoingFrame;
  push(frames: OutgoingFrame[]): void;
  now(): number;
  /** More to write in the same transaction, before the cursor moves (headquarters' entries: sync/inbox/apply.ts). */
  alsoInTransaction?(): void;
}

function check(item: CatalogueItem): void {
  if (!ITEM_TYPES.includes(item.type) || typeof item.id !== 'string' || !Number.isSafeInteger(item.rev)) {
    throw new CatalogueApplyError(`an item of unknown shape (type ${String(item.type)})`);
  }
  if (item.retired) return;
  const c = CHECKS[item.type];
  if (!c.Check(item.data)) {
    const e = c.Errors(item.data).First();
    throw new CatalogueApplyError(`${item.type} ${item.id}: ${e?.path || '/'} ${e?.message ?? 'is invalid'}`);
  }
  if (item.type === 'menu') {
    const dup = duplicateProduct(item.data.root as MenuNode, '/root');
    if (dup) throw new CatalogueApplyError(`menu ${item.id}: ${dup.pointer} product ${dup.id} is listed twice`);
  }
}

/**
 * Applies one answer of the central in ONE SQLite transaction with its new cursor: validated first, then every
 * row, then the references and the checksum; any failure throws and nothing is written (the box keeps serving
 * its last good catalogue). Staff sockets of every venue whose menu or venue changed get MENU_CHANGED.
 */
export function applyCatalogue(
  deps: CatalogueApplyDeps,
  tenantId: string,
  res: CatalogueResponse,
): { items: number; venues: number } {
  const { catalogue, provisioning } = deps;
  if (res.tenant !== tenantId)
    throw new CatalogueApplyError(`the central sent tenant ${res.tenant}, this box is ${tenantId}`);
  if (!Array.isArray(res.items) || !Number.isSafeInteger(res.rev) || typeof res.checksum !== 'string') {
    throw new CatalogueApplyError('the central answered with an unexpected body');
  }
  res.items.forEach(check);
  const order = (i: CatalogueItem) => ITEM_TYPES.indexOf(i.type);
  const items = [...res.items].sort((a, b) => order(a) - order(b) || a.rev - b.rev);
  const revoked: Revocation[] = [];
  const { frames, venues } = catalogue.transaction(() => {
    const now = deps.now();
    const before = catalogue.venues(tenantId);
    const usersBefore = catalogue.userIds(tenantId);
    const touched = new Set<string>();
    const menusTouched = new Set<string>();
    if (res.mode === 'snapshot') {
      catalogue.clearTenant(tenantId);
      for (const v of before) touched.add(v.id);
    }
    for (const item of items) {
      if (item.retired) {
        if (item.type === 'tenant') continue;
        if (item.type === 'soldOut') {
          const [venue, productId] = splitSoldOut(item.id);
          catalogue.clearSoldOut(tenantId, venue, productId);
          touched.add(venue);
        } else {
          catalogue.remove(item.type, tenantId, item.id);
          if (item.type === 'venue') touched.add(item.id);
          if (item.type === 'menu') menusTouched.add(item.id);
        }
        continue;
      }
      switch (item.type) {
        case 'tenant':
          provisioning.upsertTenant(item.data.id, item.data.name);
          break;
        case 'client':
          provisioning.upsertClient(tenantId, item.data.clientId, item.data.secretHash);
          break;
        case 'user':
          provisioning.upsertUser(tenantId, item.data.id, item.data.username, item.data.passwordHash, item.data.scope);
          break;
        case 'warehouse':
          provisioning.upsertWarehouse(tenantId, item.data.id, item.data.name);
          break;
        case 'menu':
          writeMenu(provisioning, tenantId, item.data.id, item.data.root as MenuNode);
          menusTouched.add(item.id);
          break;
        case 'venue':
          writeVenue(provisioning, tenantId, item.data as unknown as Static<typeof Venue>);
          touched.add(item.id);
          break;
        case 'soldOut':
          catalogue.setSoldOut(tenantId, item.data.venue, item.data.productId, item.data.reason, item.rev, now);
          touched.add(item.data.venue);
          continue;
      }
      catalogue.mark(item.type, tenantId, item.id, item.rev);
    }
    const after = catalogue.venues(tenantId);
    const menus = new Set(
      catalogue
        .liveRows(tenantId)
        .filter((r) => r.type === 'menu')
        .map((r) => r.id),
    );
    for (const v of after) {
      if (!menus.has(v.menu))
        throw new CatalogueApplyError(`venue ${v.id} names menu ${v.menu}, which this box does not hold`);
      if (menusTouched.has(v.menu) || res.mode === 'snapshot') touched.add(v.id);
    }
    // Staff users gone (retired, or absent from a snapshot): their tokens stop working with this commit.
    const usersAfter = new Set(catalogue.userIds(tenantId));
    for (const id of usersBefore) if (!usersAfter.has(id)) revoked.push(...deps.revokeUser(tenantId, id));
    // Clients gone (retired, or absent from a snapshot): their tokens too.
    if (res.mode === 'snapshot' || items.some((i) => i.retired && i.type === 'client'))
      revoked.push(...(deps.revokeGoneClients?.(tenantId) ?? []));
    const checksum = catalogueChecksum(catalogue.liveRows(tenantId));
    if (checksum !== res.checksum) {
      throw new ChecksumMismatch(
        `checksum at rev ${res.rev} differs from the central's (${checksum.slice(0, 12)} != ${res.checksum.slice(0, 12)})`,
      );
    }
    deps.alsoInTransaction?.();
    catalogue.setApplied(tenantId, res.rev, checksum, now);
    const menuOf = new Map([...before, ...after].map((v) => [v.id, v.menu]));
    const frames = [...touched].map((venue) =>
      deps.menuChanged(tenantId, venue, menuChanged({ venue, menu: menuOf.get(venue) ?? null, rev: res.rev })),
    );
    return { frames, venues: touched.size };
  });
  deps.noteRevoked(revoked);
  deps.push(frames);
  return { items: items.length, venues };
}

function splitSoldOut(id: string): [string, string] {
  const at = id.indexOf('/');
  return [id.slice(0, at), id.slice(at + 1)];
}

/**
 * Coexistence with a provisioning file (docs/sync.md "Down: the catalogue"): once the central's catalogue was applied
 * for a tenant, the file's entry for that tenant is skipped at start; the file still provisions other tenants
 * and every box without a central.
 */
export function provisioningWithout(provisioning: unknown, tenantId: string | null): unknown {
  if (
    !tenantId ||
    typeof provisioning !== 'object' ||
    provisioning === null ||
    !Array.isArray((provisioning as { tenants?: unknown }).tenants)
  )
    return provisioning;
  const file = provisioning as { tenants: { id?: unknown }[] };
  return { ...file, tenants: file.tenants.filter((t) => t?.id !== tenantId) };
}
