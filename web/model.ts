/** The API's shapes the screens read (docs/api.md; docs/orders.md "The order lifecycle"). */
export interface OrderLine {
  id: string;
  quantity: number;
  price: string;
  productId: string;
  product: { literals?: { name?: string }; extra?: { category?: string } };
  status: 'NEW' | 'ORDERED' | 'CANCELLED' | string;
  updated: string;
  created: string;
  extra?: { note?: string };
}

export interface Order {
  id: string;
  created: string;
  lastChanged: string;
  orderType: string;
  total: string;
  editTotal: string;
  status: 'NEW' | 'ORDERED' | 'READY' | 'COMPLETED' | 'CANCELLED' | string;
  claimCode: string;
  buckets: { venue: string; name: string; menu: string; lines: OrderLine[] }[];
  closed: boolean;
  completed: boolean;
  contact?: Record<string, string>;
}

export interface Frame {
  type: string;
  seq: number;
  payload: unknown;
}

export interface Notification {
  type: string;
  orderId: string;
  event: { correlationId: string };
  message: string;
  codes: { code: string; message: string; args: string[] }[];
}

export interface Venue {
  id: string;
  name: string;
  menu: string;
  warehouse: string;
  active: boolean;
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

/** Money as the box sends it ("18.00"), in the language's notation. */
export function money(value: string | undefined, lang: string): string {
  const n = Number(value ?? '0');
  return Number.isFinite(n) ? n.toLocaleString(lang === 'pl' ? 'pl-PL' : 'en-GB', { minimumFractionDigits: 2, maximumFractionDigits: 2 }) : String(value);
}

/** What a NOTIFICATION says: each code's own message (they name the line and product), else its message. */
export const notificationText = (n: Notification): string => (n.codes ?? []).map((c) => c.message).join('; ') || n.message;
