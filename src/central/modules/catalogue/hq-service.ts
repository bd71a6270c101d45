import {
  duplicateProduct,
  isProduct,
  type MenuNode,
  staffUserId,
  type Venue,
} from '../../../shared/catalogue-schemas.js';
import { soldOutId } from '../../../shared/catalogue-protocol.js';
import { AppError, invalidField, notFound } from '../../../shared/errors.js';
import { hashSecret } from '../../../shared/passwords.js';
import type { Pool } from '../../db/pool.js';
import type { CatalogueFeed } from './feed.js';
import type { CatalogueRepo } from './repo.js';
import { type ChangeResult, changeCatalogue } from './writer.js';

const conflict = (message: string): AppError => AppError.of('conflict', message);

/** Finds a product in a menu tree (the tree is a fresh copy from the database, changed in place). */
function findProduct(node: MenuNode, productId: string): (MenuNode & { price: string }) | undefined {
  if (isProduct(node)) return node.id === productId ? node : undefined;
  for (const child of node.items) {
    const found = findProduct(child, productId);
    if (found) return found;
  }
  return undefined;
}

/**
 * Headquarters' changes to the catalogue (docs/sync.md "Down: the catalogue"). Bodies arrive validated by the box's
 * own schemas (the routes); the references are checked here inside the change's transaction, after the tenant's
 * counter is locked, so no concurrent change can retire what a check just found. A refused change writes nothing.
 */
export function createHqCatalogue(pool: Pool, feed: CatalogueFeed) {
  const change = (
    tenantId: string,
    fn: (repo: CatalogueRepo, rev: number) => Promise<boolean>,
  ): Promise<ChangeResult> => changeCatalogue(pool, tenantId, fn);
  const mustRetire = async (done: boolean, what: string) => {
    if (!done) throw notFound(what);
    return true;
  };

  return {
    /** The tenant's catalogue as the boxes receive it: rev, checksum and every live row. */
    catalogue: (tenantId: string) => feed.read(tenantId, 0, true),

    putVenue: (tenantId: string, id: string, venue: Venue) =>
      change(tenantId, async (repo, rev) => {
        if (venue.id !== id) throw invalidField('/id', 'id must be the venue id of the path');
        if (!(await repo.live('menu', tenantId, venue.menu)))
          throw invalidField('/menu', `no menu ${venue.menu} in the catalogue`);
        if (!(await repo.live('warehouse', tenantId, venue.warehouse))) {
          throw invalidField('/warehouse', `no warehouse ${venue.warehouse} in the catalogue`);
        }
        return repo.venue(tenantId, venue, rev);
      }),
    retireVenue: (tenantId: string, id: string) =>
      change(tenantId, async (repo, rev) => mustRetire(await repo.retire('venue', tenantId, id, rev), 'venue')),

    putMenu: (tenantId: string, id: string, root: unknown) =>
      change(tenantId, async (repo, rev) => {
        const dup = duplicateProduct(root as MenuNode, '/root');
        if (dup) throw invalidField(dup.pointer, `product ${dup.id} is listed twice in the menu`);
        return repo.menu(tenantId, id, root, rev);
      }),
    retireMenu: (tenantId: string, id: string) =>
      change(tenantId, async (repo, rev) => {
        const using = await repo.venuesUsing(tenantId, 'menu', id);
        if (using.length > 0) throw conflict(`menu ${id} is the menu of venue(s) ${using.join(', ')}`);
        return mustRetire(await repo.retire('menu', tenantId, id, rev), 'menu');
      }),
    /** A product's price (the rest of the tree unchanged): lines already in orders keep the price they were sold at. */
    setPrice: (tenantId: string, menuId: string, productId: string, price: string) =>
      change(tenantId, async (repo, rev) => {
        const menu = await repo.live('menu', tenantId, menuId);
        if (!menu) throw notFound('menu');
        const root = menu.root as MenuNode;
        const product = findProduct(root, productId);
        if (!product) throw notFound('product');
        product.price = price;
        return repo.menu(tenantId, menuId, root, rev);
      }),

    /** Creates or changes a box staff user; a new user needs a password (hashed here, never stored plain). */
    async putStaffUser(tenantId: string, username: string, body: { password?: string; scope: string }) {
      const passwordHash = body.password === undefined ? undefined : hashSecret(body.password);
      const id = staffUserId(tenantId, username);
      return change(tenantId, async (repo, rev) => {
        const known = await repo.live('user', tenantId, id);
        const hash = passwordHash ?? (known?.passwordHash as string | undefined);
        if (!hash) throw invalidField('/password', 'a new staff user needs a password');
        return repo.user(tenantId, { id, username, passwordHash: hash, scope: body.scope }, rev);
      });
    },
    retireStaffUser: (tenantId: string, username: string) =>
      change(tenantId, async (repo, rev) =>
        mustRetire(await repo.retire('user', tenantId, staffUserId(tenantId, username), rev), 'staff user'),
      ),

    async putClient(tenantId: string, clientId: string, secret: string) {
      const hash = hashSecret(secret);
      return change(tenantId, (repo, rev) => repo.client(tenantId, clientId, hash, rev));
    },
    retireClient: (tenantId: string, clientId: string) =>
      change(tenantId, async (repo, rev) => mustRetire(await repo.retire('client', tenantId, clientId, rev), 'client')),

    putWarehouse: (tenantId: string, id: string, name: string) =>
      change(tenantId, (repo, rev) => repo.warehouse(tenantId, { id, name }, rev)),
    retireWarehouse: (tenantId: string, id: string) =>
      change(tenantId, async (repo, rev) => {
        const using = await repo.venuesUsing(tenantId, 'warehouse', id);
        if (using.length > 0) throw conflict(`warehouse ${id} is the warehouse of venue(s) ${using.join(', ')}`);
        return mustRetire(await repo.retire('warehouse', tenantId, id, rev), 'warehouse');
      }),

    /** Headquarters' sold-out flag of a product at a venue (the product must be on the venue's menu). */
    setSoldOut: (tenantId: string, venueId: string, productId: string, reason: string) =>
      change(tenantId, async (repo, rev) => {
        const venue = await repo.live('venue', tenantId, venueId);
        if (!venue) throw notFound('venue');
        const menu = await repo.live('menu', tenantId, venue.menu as string);
        if (!menu || !findProduct(menu.root as MenuNode, productId)) throw notFound("product on the venue's menu");
        return repo.soldOut(tenantId, venueId, productId, reason, rev);
      }),
    clearSoldOut: (tenantId: string, venueId: string, productId: string) =>
      change(tenantId, async (repo, rev) =>
        mustRetire(
          await repo.clearSoldOut(tenantId, venueId, productId, rev),
          `sold-out flag ${soldOutId(venueId, productId)}`,
        ),
      ),
  };
}
export type HqCatalogue = ReturnType<typeof createHqCatalogue>;
