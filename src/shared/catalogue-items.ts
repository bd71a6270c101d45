/**
 * The catalogue's rows (docs/sync.md "Down: the catalogue"), apart from src/shared/catalogue-protocol.ts so the
 * headquarters console (web/hq/) can name them without Node's modules.
 */
/** What a catalogue row is. */
export const ITEM_TYPES = ['tenant', 'client', 'user', 'warehouse', 'menu', 'venue', 'soldOut'] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

export interface ItemData {
  tenant: { id: string; name: string };
  /** The secret's scrypt hash only: a plain secret never leaves the central. */
  client: { clientId: string; secretHash: string };
  /** A box's staff user: id = staffUserId(tenant, username); the password's scrypt hash only. */
  user: { id: string; username: string; passwordHash: string; scope: string };
  warehouse: { id: string; name: string };
  /** The interface's menu tree (products carry their prices). */
  menu: { id: string; root: unknown };
  /** The interface's Venue (address, position, time zone, channels with hours and minimum order). */
  venue: { id: string; menu: string; warehouse: string } & Record<string, unknown>;
  /** Headquarters' sold-out flag of a product at a venue (the staff flag is the box's own). */
  soldOut: { venue: string; productId: string; reason: string };
}

/**
 * One row of the catalogue at `rev`, its last change. `retired`: a tombstone (the row was removed at the
 * central; a box deletes it, or for a warehouse that documents name, stops counting it as the central's).
 * `id` is the row's key within its type: a client's clientId, a user's id, `venue/productId` for soldOut.
 */
export type CatalogueItem = {
  [T in ItemType]:
    | { type: T; id: string; rev: number; retired: false; data: ItemData[T] }
    | { type: T; id: string; rev: number; retired: true };
}[ItemType];
