import { expect, test } from 'vitest';
import { DEMO, startTestBox, UNLIMITED_CUSTOMER } from './support/box.js';
import { command, newOrder } from './support/orders.js';

interface OrderBody {
  editTotal: string;
  buckets: { lines: { id: string; quantity: number }[] }[];
}

test('kill -9 while commands are being confirmed: after restart every confirmed command is applied exactly once', async () => {
  const box = await startTestBox({ config: UNLIMITED_CUSTOMER });
  const t = await box.token();
  const created = await command(box, t.access_token, 'new', newOrder(DEMO.openVenue));
  for (
    let i = 0;
    i < 50 && (await box.get(`/ordering-api/api/order/${created.orderId}`, t.access_token)).status !== 200;
    i++
  ) {
    await new Promise((r) => setTimeout(r, 10));
  }

  const confirmed: string[] = [];
  let killed = false;
  const worker = async () => {
    while (!killed) {
      try {
        const res = await box.post(`/ordering-api/api/order/${created.orderId}/append`, t.access_token, {
          venue: DEMO.openVenue,
          lines: [{ productId: 'woda', quantity: 1 }],
        });
        if (res.status === 200) confirmed.push(((await res.json()) as { lines: string[] }).lines[0]!);
      } catch {
        // the connection died with the process: this command was never confirmed
      }
    }
  };
  const workers = Array.from({ length: 16 }, worker);
  await new Promise((r) => setTimeout(r, 400));
  box.proc.kill('SIGKILL');
  await box.stop();
  killed = true;
  await Promise.all(workers);
  expect(confirmed.length).toBeGreaterThan(20);

  const again = await startTestBox({ dataDir: box.dataDir });
  try {
    const res = await again.get(`/ordering-api/api/order/${created.orderId}`, t.access_token);
    expect(res.status).toBe(200);
    const order = (await res.json()) as OrderBody;
    const ids = order.buckets[0]!.lines.map((l) => l.id);
    expect(new Set(ids).size).toBe(ids.length);
    const present = new Set(ids);
    expect(confirmed.filter((id) => !present.has(id))).toEqual([]);
    // A command may have been committed just before the kill without its 200 reaching us; never more than
    // the requests in flight.
    expect(ids.length - confirmed.length).toBeLessThanOrEqual(16);
    expect(order.editTotal).toBe(`${ids.length * 6}.00`);
  } finally {
    await again.stop();
  }
});
