import Database from 'better-sqlite3';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { TestBox } from './box.js';
import { command, type Confirmation } from './orders.js';
import type { Frame, TestSocket } from './socket.js';

export interface OrderLine {
  id: string;
  productId: string;
  quantity: number;
  price: string;
  status: string;
}

export interface OrderPayload {
  id: string;
  status: string;
  total: string;
  editTotal: string;
  claimCode: string;
  closed: boolean;
  completed: boolean;
  orderType: string;
  users: { userId: string; roles: string[] }[];
  buckets: { venue: string; lines: OrderLine[] }[];
}

export interface Code {
  code: string;
  message: string;
  args: string[];
}

export const linesOf = (order: OrderPayload): OrderLine[] => order.buckets.flatMap((b) => b.lines);

/** POSTs `order/{id}/{name}` and returns the 200 confirmation. */
export const orderCommand = (
  box: TestBox,
  token: string,
  orderId: string,
  name: string,
  body?: unknown,
): Promise<Confirmation> => command(box, token, `${orderId}/${name}`, body ?? {});

/** The next ORDER_CHANGE on the socket, checked to be about `orderId`. */
export async function nextChange(ws: TestSocket, orderId: string): Promise<OrderPayload> {
  const frame: Frame = await ws.next('ORDER_CHANGE');
  expect(frame.payload.id).toBe(orderId);
  return frame.payload as unknown as OrderPayload;
}

/** The codes of the next NOTIFICATION, checked to answer `c`. */
export async function nextCodes(ws: TestSocket, c: Confirmation): Promise<Code[]> {
  const frame = await ws.next('NOTIFICATION');
  expect((frame.payload.event as { correlationId: string }).correlationId).toBe(c.correlationId);
  return frame.payload.codes as Code[];
}

export interface PrintJobRow {
  tenant_id: string;
  id: string;
  venue_id: string;
  order_id: string;
  kind: string;
  round: number;
  payload: {
    kind: string;
    venueName: string;
    orderType: string;
    claimCode: string;
    round: number;
    timeZone: string;
    localTime: string;
    lines: { text: string; quantity: number; name: string; category: string }[];
    total: string;
    orderTotal: string;
    reason?: string;
  };
  state: string;
}

/** The print jobs of an order, read through a read-only connection beside the running box (WAL). */
export function printJobs(box: TestBox, orderId: string): PrintJobRow[] {
  const db = new Database(join(box.dataDir, 'venue-box.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT * FROM print_jobs WHERE order_id = ? ORDER BY rowid').all(orderId) as (Omit<
      PrintJobRow,
      'payload'
    > & { payload_json: string })[];
    return rows.map(({ payload_json, ...r }) => ({
      ...r,
      payload: JSON.parse(payload_json) as PrintJobRow['payload'],
    }));
  } finally {
    db.close();
  }
}

/** Whether the order holds its claim code: 1 while it is in the index of open orders' codes, else 0. */
export function claimHeld(db: Database.Database, tenantId: string, claimCode: string, orderId: string): number {
  return (
    db
      .prepare(`SELECT COUNT(*) AS n FROM orders INDEXED BY orders_open_claim
    WHERE tenant_id = ? AND claim_code = ? AND closed = 0 AND id = ?`)
      .get(tenantId, claimCode, orderId) as { n: number }
  ).n;
}

/** Whether each bucket of the order still holds its claim code (claimHeld, for each of its venues). */
export function bucketsOpen(box: TestBox, orderId: string): number[] {
  const db = new Database(join(box.dataDir, 'venue-box.db'), { readonly: true, fileMustExist: true });
  try {
    const order = db.prepare('SELECT tenant_id, claim_code, venues_json FROM orders WHERE id = ?').get(orderId) as {
      tenant_id: string;
      claim_code: string;
      venues_json: string;
    };
    const held = claimHeld(db, order.tenant_id, order.claim_code, orderId);
    return (JSON.parse(order.venues_json) as string[]).map(() => held);
  } finally {
    db.close();
  }
}
