/**
 * The shapes the orders page reads, each naming its route (docs/sync.md "The central node", "Orders created at the
 * central"). The Order itself is the box's own schema (src/shared/order-schemas.ts, imported as a type only).
 */
import type { Order as ApiOrder } from '../../../../src/shared/order-schemas.js';

export const ORDER_STATUSES = ['NEW', 'ORDERED', 'READY', 'COMPLETED', 'CANCELLED'] as const;
export const ORDER_TYPES = ['DELIVERY', 'TAKE_AWAY', 'DINE_IN_OPEN', 'DINE_IN'] as const;

/** GET /hq-api/api/orders items and GET /hq-api/api/orders/:id: the Order plus where and which version it is. */
export type HqOrder = Omit<ApiOrder, 'contact'> & {
  deviceId: string;
  version: number;
  /** From the central's order facts (docs/sync.md "HQ reports and order search"), null when the order had none. */
  contact?: { name?: string; phone?: string; email?: string } | null;
};

/** GET /hq-api/api/orders: one page, `next` the cursor for `after`. */
export interface OrdersPage {
  items: HqOrder[];
  next: string | null;
}

/** GET /hq-api/api/orders/:id/versions: one version and the command that made it (src/shared/sync-messages.ts). */
export interface OrderVersion {
  version: number;
  deviceId: string;
  seq: number;
  receivedAt: string;
  command: { correlationId?: string; kind: string; userId: string; staff: boolean; confirmedAt: string };
  order: HqOrder;
}

/** An error code as the central and the boxes report them (src/shared/errors.ts). */
export interface Code {
  code: string;
  message: string;
  args?: unknown[];
}

/** GET /hq-api/api/inbox(/:id): what headquarters sent a venue's box and what became of it. */
export interface InboxEntry {
  id: string;
  kind: 'document' | 'order';
  venue: string;
  rev: number;
  createdBy: string;
  createdAt: string;
  status: 'pending' | 'delivered' | 'applied' | 'rejected';
  codes: Code[];
  device: string | null;
  resultAt: string | null;
  body: Record<string, unknown>;
}

/** What a line's product snapshot holds of its name (the menu's product as sold; either shape is seen). */
export function lineName(product: unknown, fallback: string): string {
  const p = product as { literals?: { name?: string }; details?: { literals?: { name?: string } } } | null;
  return p?.details?.literals?.name ?? p?.literals?.name ?? fallback;
}

/** "a, b, c" of an entry's codes: the box's (or central's) own messages. */
export const codesText = (codes: Code[]): string => codes.map((c) => `${c.code}: ${c.message}`).join('; ');
