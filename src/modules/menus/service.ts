import { notFound } from '../../shared/errors.js';
import type { VenueRepo } from '../venues/repo.js';
import type { Channel } from '../venues/schemas.js';
import type { SoldOutEntry, SoldOutFlags } from './sold-out.js';
import type { MenuRepo, ProductRow } from './repo.js';
import { isProduct, type MenuNode } from './schemas.js';

export interface MenuResponse {
  root: MenuNode;
  /** The requested venue's sold-out products. */
  locks: SoldOutEntry[];
}

/** The menu a venue serves on a channel: products restricted to other channels are left out. */
export function createMenuService(menus: MenuRepo, venues: VenueRepo, soldOutFlags: Pick<SoldOutFlags, 'entriesOf'>) {
  return {
    menuFor(tenantId: string, menuId: string, venueId: string, channel: Channel): MenuResponse {
      const venue = venues.getVenue(tenantId, venueId);
      if (!venue || venue.menu !== menuId) throw notFound('menu for this venue');
      const root = menus.menuRoot(tenantId, menuId);
      if (!root) throw notFound('menu');
      const venueLocks = soldOutFlags.entriesOf(tenantId, venueId);
      const soldOut = new Set(venueLocks.map((l) => l.productId));
      return { root: forChannel(root, channel, soldOut)!, locks: venueLocks };
    },

    /** A product of the menu as sold on the channel, or undefined when it is not offered there. */
    productFor(tenantId: string, menuId: string, productId: string, channel: Channel): ProductRow | undefined {
      const product = menus.product(tenantId, menuId, productId);
      if (!product || (product.channels && !product.channels.includes(channel))) return undefined;
      return product;
    },
  };
}
export type MenuService = ReturnType<typeof createMenuService>;

/**
 * The tree as served on a channel: products of other channels left out; a product sold out at the venue
 * carries `soldOut: true` (absent otherwise, so a menu with nothing sold out keeps the interface's exact shape).
 */
export function forChannel(
  node: MenuNode,
  channel: Channel,
  soldOut: ReadonlySet<string> = new Set(),
): MenuNode | undefined {
  if (isProduct(node)) {
    const { channels, ...served } = node;
    if (channels && !channels.includes(channel)) return undefined;
    return soldOut.has(node.id) ? Object.assign(served, { soldOut: true }) : served;
  }
  return { ...node, items: node.items.map((n) => forChannel(n, channel, soldOut)).filter((n) => n !== undefined) };
}
