import {
  duplicateProduct,
  isProduct,
  type MenuNode,
  staffUserId,
  type Venue,
} from '../../../shared/catalogue-schemas.js';
import type { CatalogueItem, ItemType } from '../../../shared/catalogue-items.js';
import { soldOutId } from '../../../shared/catalogue-protocol.js';
import { AppError, invalidField, notFound } from '../../../shared/errors.js';
import { hashSecret } from '../../../shared/passwords.js';
import type { Pool } from '../../db/pool.js';
import { HQ_CONSOLE_CLIENT } from '../auth/service.js';
import type { CatalogueFeed } from './feed.js';
import { type CatalogueRepo, createCatalogueRepo } from './repo.js';
import { anyChanged, type ChangeResult, changeCatalogue } from './writer.js';

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

/** Who changes the catalogue, and the rev they last saw of the row (If-Match; docs/sync.md "Headquarters' catalogue API"). */
export interface Caller {
  tenantId: string;
  userId: string;
  /** The revs If-Match names; undefined when it was absent or `*`: no check. */
  ifMatch?: number[];
}

/** The catalogue row a change is about, for its If-Match check. */
type RowRef = { type: ItemType; id: string };

/**
 * Headquarters' changes to the catalogue (docs/sync.md "Down: the catalogue"). Bodies arrive validated by the box's
 * own schemas (the routes); the references and If-Match are checked here inside the change's transaction, after
 * the tenant's counter is locked, so no concurrent change can retire what a check just found or slip in between
 * the rev compared and the write. A refused change writes nothing.
 */
export function createHqCatalogue(pool: Pool, feed: CatalogueFeed) {
  const change = (
    caller: Caller,
    row: RowRef | undefined,
    fn: (repo: CatalogueRepo, rev: number) => Promise<boolean>,
  ): Promise<ChangeResult> =>
    changeCatalogue(
      pool,
      caller.tenantId,
      async (repo, rev) => {
        if (row && caller.ifMatch) await checkRevision(repo, caller.tenantId, caller.ifMatch, row);
        return fn(repo, rev);
      },
      caller.userId,
    );
  const mustRetire = async (done: boolean, what: string) => {
    if (!done) throw notFound(what);
    return true;
  };

  return {
    /**
     * The tenant's catalogue as the boxes receive it (rev, checksum, every live row), less the scrypt hashes of
     * staff passwords and client secrets: a `read` user must not get what an offline guesser needs.
     */
    catalogue: async (tenantId: string) => {
      const answer = await feed.read(tenantId, 0, true);
      return { ...answer, items: answer.items.map(withoutSecrets) };
    },
    /** The tenant's newest catalogue rev: what every box will have once it applied it. */
    rev: async (tenantId: string): Promise<number> => (await createCatalogueRepo(pool).position(tenantId)).rev,

    putVenue: (caller: Caller, id: string, venue: Venue) =>
      change(caller, { type: 'venue', id }, async (repo, rev) => {
        if (venue.id !== id) throw invalidField('/id', 'id must be the venue id of the path');
        if (!(await repo.live('menu', caller.tenantId, venue.menu)))
          throw invalidField('/menu', `no menu ${venue.menu} in the catalogue`);
        if (!(await repo.live('warehouse', caller.tenantId, venue.warehouse))) {
          throw invalidField('/warehouse', `no warehouse ${venue.warehouse} in the catalogue`);
        }
        return repo.venue(caller.tenantId, venue, rev);
      }),
    retireVenue: (caller: Caller, id: string) =>
      change(caller, { type: 'venue', id }, async (repo, rev) =>
        mustRetire(await repo.retire('venue', caller.tenantId, id, rev), 'venue'),
      ),

    putMenu: (caller: Caller, id: string, root: unknown) =>
      change(caller, { type: 'menu', id }, async (repo, rev) => {
        const dup = duplicateProduct(root as MenuNode, '/root');
        if (dup) throw invalidField(dup.pointer, `product ${dup.id} is listed twice in the menu`);
        return repo.menu(caller.tenantId, id, root, rev);
      }),
    retireMenu: (caller: Caller, id: string) =>
      change(caller, { type: 'menu', id }, async (repo, rev) => {
        const using = await repo.venuesUsing(caller.tenantId, 'menu', id);
        if (using.length > 0) throw conflict(`menu ${id} is the menu of venue(s) ${using.join(', ')}`);
        return mustRetire(await repo.retire('menu', caller.tenantId, id, rev), 'menu');
      }),
    /** A product's price (the rest of the tree unchanged): lines already in orders keep the price they were sold at. */
    setPrice: (caller: Caller, menuId: string, productId: string, price: string) =>
      change(caller, { type: 'menu', id: menuId }, async (repo, rev) => {
        const menu = await repo.live('menu', caller.tenantId, menuId);
        if (!menu) throw notFound('menu');
        const root = menu.root as MenuNode;
        const product = findProduct(root, productId);
        if (!product) throw notFound('product');
        product.price = price;
        return repo.menu(caller.tenantId, menuId, root, rev);
      }),
    /**
     * A product's price in every live menu that lists it, at one rev (a chain's price list changed once, every
     * venue's box gets it in the same answer). 404 when no live menu lists the product.
     */
    async setPriceEverywhere(caller: Caller, productId: string, price: string) {
      let menus: string[] = [];
      const result = await change(caller, undefined, async (repo, rev) => {
        const listing = (await repo.liveMenus(caller.tenantId)).filter((m) => {
          const product = findProduct(m.root as MenuNode, productId);
          if (product) product.price = price;
          return product !== undefined;
        });
        if (listing.length === 0) throw notFound('product in a live menu');
        menus = listing.map((m) => m.id);
        return anyChanged(listing.map((m) => () => repo.menu(caller.tenantId, m.id, m.root, rev)));
      });
      return { ...result, menus };
    },

    /** Creates or changes a box staff user; a new user needs a password (hashed here, never stored plain). */
    async putStaffUser(caller: Caller, username: string, body: { password?: string; scope: string }) {
      const passwordHash = body.password === undefined ? undefined : hashSecret(body.password);
      const id = staffUserId(caller.tenantId, username);
      return change(caller, { type: 'user', id }, async (repo, rev) => {
        const known = await repo.live('user', caller.tenantId, id);
        const hash = passwordHash ?? (known?.passwordHash as string | undefined);
        if (!hash) throw invalidField('/password', 'a new staff user needs a password');
        return repo.user(caller.tenantId, { id, username, passwordHash: hash, scope: body.scope }, rev);
      });
    },
    retireStaffUser: (caller: Caller, username: string) => {
      const id = staffUserId(caller.tenantId, username);
      return change(caller, { type: 'user', id }, async (repo, rev) =>
        mustRetire(await repo.retire('user', caller.tenantId, id, rev), 'staff user'),
      );
    },

    async putClient(caller: Caller, clientId: string, secret: string) {
      // The console's public client is the central's own (docs/console.md "Signing in"): not a boxes' client.
      if (clientId === HQ_CONSOLE_CLIENT)
        throw invalidField('clientId', `${HQ_CONSOLE_CLIENT} is reserved for the console`);
      const hash = hashSecret(secret);
      return change(caller, { type: 'client', id: clientId }, (repo, rev) =>
        repo.client(caller.tenantId, clientId, hash, rev),
      );
    },
    retireClient: (caller: Caller, clientId: string) =>
      change(caller, { type: 'client', id: clientId }, async (repo, rev) =>
        mustRetire(await repo.retire('client', caller.tenantId, clientId, rev), 'client'),
      ),

    putWarehouse: (caller: Caller, id: string, name: string) =>
      change(caller, { type: 'warehouse', id }, (repo, rev) => repo.warehouse(caller.tenantId, { id, name }, rev)),
    retireWarehouse: (caller: Caller, id: string) =>
      change(caller, { type: 'warehouse', id }, async (repo, rev) => {
        const using = await repo.venuesUsing(caller.tenantId, 'warehouse', id);
        if (using.length > 0) throw conflict(`warehouse ${id} is the warehouse of venue(s) ${using.join(', ')}`);
        return mustRetire(await repo.retire('warehouse', caller.tenantId, id, rev), 'warehouse');
      }),

    /** Headquarters' sold-out flag of a product at a venue (the product must be on the venue's menu). */
    setSoldOut: (caller: Caller, venueId: string, productId: string, reason: string) =>
      change(caller, { type: 'soldOut', id: soldOutId(venueId, productId) }, async (repo, rev) => {
        const venue = await repo.live('venue', caller.tenantId, venueId);
        if (!venue) throw notFound('venue');
        const menu = await repo.live('menu', caller.tenantId, venue.menu as string);
        if (!menu || !findProduct(menu.root as MenuNode, productId)) throw notFound("product on the venue's menu");
        return repo.soldOut(caller.tenantId, venueId, productId, reason, rev);
      }),
    clearSoldOut: (caller: Caller, venueId: string, productId: string) =>
      change(caller, { type: 'soldOut', id: soldOutId(venueId, productId) }, async (repo, rev) =>
        mustRetire(
          await repo.clearSoldOut(caller.tenantId, venueId, productId, rev),
          `sold-out flag ${soldOutId(venueId, productId)}`,
        ),
      ),
  };
}
export type HqCatalogue = ReturnType<typeof createHqCatalogue>;

/** A catalogue row as headquarters reads it: a staff user or client without its hash. */
function withoutSecrets(item: CatalogueItem): CatalogueItem | (Omit<CatalogueItem, 'data'> & { data: object }) {
  if (item.retired) return item;
  if (item.type === 'user') {
    const { passwordHash: _hash, ...data } = item.data;
    return { ...item, data };
  }
  if (item.type === 'client') {
    const { secretHash: _hash, ...data } = item.data;
    return { ...item, data };
  }
  return item;
}

/**
 * If-Match against the row's rev as GET /hq-api/api/catalogue shows it: another rev (the row changed since the
 * caller read it, or it is gone) is a 412 `revisionChanged` naming the current rev and, when the API made it, who.
 */
async function checkRevision(repo: CatalogueRepo, tenantId: string, ifMatch: number[], row: RowRef): Promise<void> {
  const current = await repo.revOf(row.type, tenantId, row.id);
  if (ifMatch.includes(current)) return;
  const name = `${row.type} ${row.id}`;
  if (current === 0) {
    throw AppError.of('revisionChanged', `${name} does not exist (or was retired) while If-Match names a rev`, ['0']);
  }
  const author = await repo.authorOf(tenantId, current);
  const by = author === undefined ? '' : ` by ${author}`;
  const message = `${name} changed at rev ${current}${by}; read it again and apply the change to that`;
  throw AppError.of('revisionChanged', message, [String(current)]);
}
