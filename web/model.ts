/**
 * The API's shapes the screens read (docs/api.md; docs/orders.md "The order lifecycle"): the Order and the socket's
 * frames are the box's own schemas (src/shared/order-schemas.ts, src/shared/socket-protocol.ts), imported as types
 * only, so the bundle takes no code from them.
 */
import type { Order as ApiOrder } from '../src/shared/order-schemas.js';
import type { FramePayload, FrameType } from '../src/shared/socket-protocol.js';

/** What the screens read of a line's product: the API gives the menu's product as it was sold, of no fixed shape. */
export interface LineProduct {
  literals?: { name?: string };
  extra?: { category?: string };
}

type ApiBucket = ApiOrder['buckets'][number];
export type OrderLine = Omit<ApiBucket['lines'][number], 'product'> & { product: LineProduct };
export type Order = Omit<ApiOrder, 'buckets'> & { buckets: (Omit<ApiBucket, 'lines'> & { lines: OrderLine[] })[] };

export interface Frame {
  type: FrameType;
  seq: number;
  payload: unknown;
}

export type Notification = FramePayload<'NOTIFICATION'>;

export interface Venue {
  id: string;
  name: string;
  menu: string;
  warehouse: string;
  active: boolean;
  /** IANA zone: every time on the screens is shown in it (docs/screens.md "Money and time"). */
  timeZone: string;
}

export interface MenuNode {
  kind: string;
  id: string;
  details: { literals: { name?: string; description?: string }; media?: { url: string; name: string }[] };
  items?: MenuNode[];
  price?: string;
  soldOut?: boolean;
  _?: { category?: string };
}

export interface Menu {
  root: MenuNode;
  locks: { productId: string; reason?: string }[];
}

export const isProduct = (n: MenuNode): boolean => n.kind.endsWith('/product');

/** Every product of a menu tree, with the name of the category it sits in. */
export function productsOf(node: MenuNode, category = ''): { product: MenuNode; category: string }[] {
  if (isProduct(node)) return [{ product: node, category }];
  const name = node.id === 'rootcat' ? '' : (node.details.literals.name ?? node.id);
  return (node.items ?? []).flatMap((n) => productsOf(n, name || category));
}

export const nameOf = (line: OrderLine): string => line.product.literals?.name ?? line.productId;

/** The lines of an order in one list (the screens show one venue's bucket: the box serves one venue each). */
export const linesOf = (order: Order): OrderLine[] => order.buckets.flatMap((b) => b.lines);

/**
 * The rounds of an order: its ORDERED lines grouped by the time they were submitted (a submit turns the round's
 * NEW lines into ORDERED in one command, so they share `updated`), oldest first.
 */
export function roundsOf(order: Order): OrderLine[][] {
  const byTime = new Map<string, OrderLine[]>();
  for (const line of linesOf(order)) {
    if (line.status !== 'ORDERED') continue;
    byTime.set(line.updated, [...(byTime.get(line.updated) ?? []), line]);
  }
  return [...byTime.keys()].sort().map((k) => byTime.get(k)!);
}

/** What a NOTIFICATION says: each code's own message (they name the line and product), else its message. */
export const notificationText = (n: Notification): string =>
  (n.codes ?? []).map((c) => c.message).join('; ') || n.message;
