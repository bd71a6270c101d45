import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { startTestBox, type TestBox } from './support/box.js';
import { type FakePrinter, startFakePrinter, ticketText } from './support/fake-printer.js';
import { FAST_PRINTING, jobsOf, printerOf, sleep, submitOrder, VENUE } from './support/printing.js';
import { skipWithout } from './support/system-packages.js';

// A receipt printer on a serial line is a socat pseudo-terminal pair (test/support/fake-printer.ts).
const skip = skipWithout(import.meta.url, 'socat');

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function boxWith(config: Record<string, unknown>, dataDir?: string) {
  const box = await startTestBox({ config, ...(dataDir ? { dataDir } : {}) });
  cleanup.push(() => box.stop());
  const customer = (await box.token()).access_token;
  const staff = (await box.token('kuchnia', 'kuchnia-demo-1')).access_token;
  return { box, customer, staff };
}

async function printer(name: string, plugged = true): Promise<FakePrinter> {
  const p = await startFakePrinter(mkdtempSync(join(tmpdir(), 'vb-print-rec-')), name, { plugged });
  cleanup.push(() => p.stop());
  return p;
}

test.skipIf(skip)('kill -9 with jobs queued: after the restart each is printed once, in order', async () => {
  const k = await printer('kitchen', false);
  const config = {
    printers: [{ name: 'kitchen', venue: VENUE, role: 'kitchen', path: k.boxPath }],
    printing: FAST_PRINTING,
  };
  const first: { box: TestBox; customer: string; staff: string } = await boxWith(config);
  const orders: string[] = [];
  for (const productId of ['zurek', 'rosol', 'barszcz']) {
    orders.push(await submitOrder(first.box, first.staff, first.customer, [{ productId, quantity: 1 }]));
  }
  await expect
    .poll(async () => printerOf(first.box, first.staff, 'kitchen'))
    .toMatchObject({ status: 'offline', queueDepth: 3 });
  const codes = (await jobsOf(first.box, first.staff, '?printer=kitchen')).reverse().map((j) => j.ticket.claimCode);
  expect(await first.box.stop('SIGKILL')).toBeNull();

  await k.plugIn();
  const { box, staff } = await boxWith(config, first.box.dataDir);
  const tickets = await k.waitForTickets(3);
  await sleep(600);
  expect(k.tickets()).toHaveLength(3);
  expect(tickets.map((t) => codes.find((c) => ticketText(t).includes(c)))).toEqual(codes);
  await expect.poll(async () => (await jobsOf(box, staff, '?state=printed')).length).toBe(3);
  expect(orders).toHaveLength(3);
});

test.skipIf(skip)(
  'a kitchen ticket older than kitchenMaxAgeMinutes is not printed by itself: expired, shown, reprintable',
  async () => {
    const k = await printer('kitchen', false);
    const { box, customer, staff } = await boxWith({
      printers: [{ name: 'kitchen', venue: VENUE, role: 'kitchen', path: k.boxPath }],
      printing: { ...FAST_PRINTING, kitchenMaxAgeMinutes: 0.01 }, // 600 ms
    });
    const orderId = await submitOrder(box, staff, customer, [{ productId: 'zurek', quantity: 2 }]);
    await expect
      .poll(async () => (await jobsOf(box, staff, '?state=expired')).map((j) => j.orderId), { timeout: 5000 })
      .toEqual([orderId]);

    await k.plugIn();
    await expect.poll(async () => (await printerOf(box, staff, 'kitchen')).status).toBe('ok');
    await sleep(300);
    expect(k.tickets()).toEqual([]);

    const expired = (await jobsOf(box, staff, '?state=expired'))[0]!;
    const res = await box.post(`/printing-api/api/jobs/${expired.id}/reprint`, staff, {});
    expect(res.status).toBe(201);
    const [copy] = await k.waitForTickets(1);
    expect(ticketText(copy!)).toContain('KOPIA / COPY');
    expect(ticketText(copy!)).toContain(expired.ticket.claimCode);
    expect(ticketText(copy!)).toContain('2 x Żurek');
  },
);

test.skipIf(skip)(
  'a printer down longer than backupAfterSeconds: its kitchen tickets print on its backup, headed FOR: it',
  async () => {
    const k = await printer('kitchen', false);
    const c = await printer('counter');
    const { box, customer, staff } = await boxWith({
      printers: [
        { name: 'kitchen', venue: VENUE, role: 'kitchen', path: k.boxPath, backup: 'counter' },
        { name: 'counter', venue: VENUE, role: 'counter', path: c.boxPath },
      ],
      printing: { ...FAST_PRINTING, backupAfterSeconds: 1 },
    });
    const orderId = await submitOrder(box, staff, customer, [{ productId: 'pierogi-ruskie', quantity: 1 }]);
    const [one, two] = await c.waitForTickets(2);
    const texts = [ticketText(one!), ticketText(two!)];
    const kitchenTicket = texts.find((t) => t.includes('KUCHNIA / KITCHEN'))!;
    expect(kitchenTicket).toContain('ZAMIAST / FOR: kitchen');
    expect(kitchenTicket).toContain('1 x Pierogi ruskie');
    expect(texts.find((t) => t.includes('ODBIÓR / PICK-UP'))).not.toContain('FOR:');
    await expect
      .poll(async () => (await jobsOf(box, staff, '?printer=kitchen')).map((j) => [j.orderId, j.state, j.printedOn]))
      .toEqual([[orderId, 'printed', 'counter']]);
    expect(await printerOf(box, staff, 'kitchen')).toMatchObject({ status: 'offline', divertedTo: 'counter' });

    // Plugged back in: the kitchen prints its own tickets again, without the header.
    await k.plugIn();
    await expect.poll(async () => printerOf(box, staff, 'kitchen')).toMatchObject({ status: 'ok', divertedTo: null });
    await submitOrder(box, staff, customer, [{ productId: 'schabowy', quantity: 1 }]);
    const [own] = await k.waitForTickets(1);
    expect(ticketText(own!)).toContain('1 x Kotlet schabowy');
    expect(ticketText(own!)).not.toContain('FOR:');
    await c.waitForTickets(3); // the claim slip of the second order
    await sleep(300);
    expect(c.tickets()).toHaveLength(3);
  },
);
