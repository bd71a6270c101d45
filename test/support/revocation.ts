import { expect } from 'vitest';
import type { TestBox } from './box.js';
import { command, newOrder } from './orders.js';
import type { TestSocket } from './socket.js';

/** docs/api.md "Token revocation": a revoked token's socket closes with 4001 and why, within `withinMs`. */
export async function expectClosedWith(ws: TestSocket, reason: string, withinMs = 1000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still open'>((resolve) => {
    timer = setTimeout(() => resolve('still open'), withinMs);
  });
  const closed = await Promise.race([ws.closed, late]);
  clearTimeout(timer);
  expect(closed, `closed within ${withinMs} ms`).toEqual({ code: 4001, reason });
}

/**
 * A new order at `venue` by a new anonymous customer: every open venue socket in `open` gets its ORDER_CHANGE,
 * and the `closed` sockets got none after they closed (their ORDER_CHANGE count is what it was).
 */
export async function expectOrderReaches(
  box: TestBox,
  venue: string,
  open: TestSocket[],
  closed: TestSocket[] = [],
): Promise<void> {
  const counts = closed.map((ws) => ws.frames.filter((f) => f.type === 'ORDER_CHANGE').length);
  const customer = (await box.token()).access_token;
  const { orderId } = await command(
    box,
    customer,
    'new',
    newOrder(venue, [{ productId: 'pierogi-ruskie', quantity: 1 }]),
  );
  for (const ws of open) {
    for (;;) {
      const frame = await ws.next('ORDER_CHANGE');
      if (frame.payload.id === orderId) break;
    }
  }
  expect(closed.map((ws) => ws.frames.filter((f) => f.type === 'ORDER_CHANGE').length)).toEqual(counts);
}
