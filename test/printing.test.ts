import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestBox, type TestBox } from './support/box.js';
import { type FakePrinter, hasCut, startFakePrinter, ticketText } from './support/fake-printer.js';
import { expectApiError } from './support/fixtures.js';
import { nextChange, orderCommand, type OrderPayload } from './support/lifecycle.js';
import { command, newOrder } from './support/orders.js';
import { FAST_PRINTING, type JobItem, jobsOf as jobsOfBox, printersIdle, VENUE } from './support/printing.js';
import { openSocket, type TestSocket } from './support/socket.js';
import { contractsOf } from './support/contracts.js';
import { skipWithout } from './support/system-packages.js';

// A receipt printer on a serial line is a socat pseudo-terminal pair (test/support/fake-printer.ts).
const skip = skipWithout(import.meta.url, 'socat');

let dir: string;
let box: TestBox;
let hot: FakePrinter;
let bar: FakePrinter;
let counter: FakePrinter;
let customer: string;
let staff: string;
let cws: TestSocket;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vb-print-'));
  [hot, bar, counter] = await Promise.all([
    startFakePrinter(dir, 'hot'),
    startFakePrinter(dir, 'bar'),
    startFakePrinter(dir, 'counter'),
  ]);
  box = await startTestBox({
    config: {
      printers: [
        { name: 'hot', venue: VENUE, role: 'kitchen', path: hot.boxPath, categories: ['soups', 'mains'] },
        { name: 'bar', venue: VENUE, role: 'kitchen', path: bar.boxPath, categories: ['drinks', 'desserts'] },
        { name: 'counter', venue: VENUE, role: 'counter', path: counter.boxPath },
      ],
      printing: FAST_PRINTING,
    },
  });
  customer = (await box.token()).access_token;
  staff = (await box.token('kuchnia', 'kuchnia-demo-1')).access_token;
  cws = await openSocket(box.wsUrl('/ordering-api/ws'), customer);
  await cws.next('HELLO');
});
afterAll(async () => {
  cws?.close();
  // SIGTERM: the workers stop and the box exits cleanly.
  expect(await box?.stop()).toBe(0);
  await Promise.all([hot, bar, counter].map((p) => p?.stop()));
});

/** A submitted TAKE_AWAY order at the open venue; returns the order as ORDERED. */
async function submittedOrder(lines: { productId: string; quantity: number }[]): Promise<OrderPayload> {
  const c = await command(box, customer, 'new', newOrder(VENUE, lines));
  await nextChange(cws, c.orderId);
  await orderCommand(box, customer, c.orderId, 'submit');
  return nextChange(cws, c.orderId);
}

const jobsOf = (query: string): Promise<JobItem[]> => jobsOfBox(box, staff, query);

/** Every ticket of the tests before this one has come off the line: marks taken now count only this test's. */
const idle = (): Promise<void> => printersIdle(box, staff, { hot, bar, counter });

describe.skipIf(skip)('tickets on the serial line', () => {
  test('a submit prints each station its share of the round and the claim slip at the counter', async () => {
    const order = await submittedOrder([
      { productId: 'zurek', quantity: 2 },
      { productId: 'kompot', quantity: 1 },
    ]);
    // This order's tickets, whichever tests printed before it.
    const [kitchenHot, kitchenBar, claim] = await Promise.all(
      [hot, bar, counter].map((p) => p.waitForTicketWith(order.claimCode)),
    );

    for (const t of [kitchenHot!, kitchenBar!, claim!]) {
      expect(t.subarray(0, 2)).toEqual(Buffer.from([0x1b, 0x40])); // ESC @
      expect(hasCut(t)).toBe(true); // GS V
      expect(ticketText(t)).toContain(order.claimCode);
    }
    const hotText = ticketText(kitchenHot!);
    expect(hotText).toContain('KUCHNIA / KITCHEN');
    expect(hotText).toContain('Round 1');
    expect(hotText).toContain('2 x Żurek'); // cp852 on the wire, decoded here
    expect(kitchenHot!.includes(Buffer.from('Ż', 'utf8'))).toBe(false);
    expect(hotText).not.toContain('Kompot');
    const barText = ticketText(kitchenBar!);
    expect(barText).toContain('1 x Kompot');
    expect(barText).not.toContain('Żurek');

    const claimText = ticketText(claim!);
    expect(claimText).toContain('ODBIÓR / PICK-UP');
    expect(claimText).toContain('2 x Żurek');
    expect(claimText).toContain('1 x Kompot');
    expect(claimText).toContain('43.00');
    expect(claimText).toContain('Not a fiscal receipt');
    expect(claim!.includes(Buffer.from([0x1d, 0x28, 0x6b]))).toBe(true); // GS ( k: the QR code
    expect(claimText).toContain(order.id);

    await expect
      .poll(async () => (await jobsOf(`?state=printed`)).filter((j) => j.orderId === order.id).length)
      .toBe(3);
    const jobs = (await jobsOf('')).filter((j) => j.orderId === order.id);
    expect(jobs.map((j) => [j.kind, j.printer, j.state, j.printedOn]).sort()).toEqual([
      ['claim', 'counter', 'printed', 'counter'],
      ['kitchen', 'bar', 'printed', 'bar'],
      ['kitchen', 'hot', 'printed', 'hot'],
    ]);
    expect(jobs.find((j) => j.printer === 'bar')!.ticket).toMatchObject({
      lines: [{ text: '1 x Kompot' }],
      total: '7.00',
    });
  });

  test('a station with no line in the round gets no ticket', async () => {
    await idle();
    const before = { hot: hot.tickets().length, bar: bar.tickets().length, counter: counter.tickets().length };
    const order = await submittedOrder([{ productId: 'rosol', quantity: 1 }]);
    await hot.waitForTickets(before.hot + 1);
    await counter.waitForTickets(before.counter + 1);
    const jobs = (await jobsOf('')).filter((j) => j.orderId === order.id);
    expect(jobs.map((j) => j.printer).sort()).toEqual(['counter', 'hot']);
    await new Promise((r) => setTimeout(r, 300));
    expect(bar.tickets()).toHaveLength(before.bar);
  });

  test('a staff cancel sends CANCELLED slips to the kitchen printers that had the order, not to the counter', async () => {
    const order = await submittedOrder([
      { productId: 'pierogi-miesne', quantity: 1 },
      { productId: 'woda', quantity: 2 },
    ]);
    await Promise.all([hot, bar, counter].map((p) => p.waitForTicketWith(order.claimCode)));
    await idle();
    const before = { hot: hot.tickets().length, bar: bar.tickets().length, counter: counter.tickets().length };
    await orderCommand(box, staff, order.id, 'cancel', { reason: 'klient zrezygnował' });
    expect((await nextChange(cws, order.id)).status).toBe('CANCELLED');
    const hotSlip = (await hot.waitForTickets(before.hot + 1)).at(-1)!;
    const barSlip = (await bar.waitForTickets(before.bar + 1)).at(-1)!;
    expect(ticketText(hotSlip)).toContain('ANULOWANE / CANCELLED');
    expect(ticketText(hotSlip)).toContain('1 x Pierogi z mięsem');
    expect(ticketText(hotSlip)).not.toContain('Woda');
    expect(ticketText(hotSlip)).toContain('klient zrezygnował');
    expect(ticketText(barSlip)).toContain('2 x Woda mineralna');
    await new Promise((r) => setTimeout(r, 300));
    expect(counter.tickets()).toHaveLength(before.counter);
  });
});

describe.skipIf(skip)('staff API /printing-api/api', () => {
  test("printers: status, queue depth, oldest job age and last error of the tenant's printers", async () => {
    await idle(); // no job of another test still queued
    await expect
      .poll(async () => {
        const res = await box.get('/printing-api/api/printers', staff);
        return ((await res.json()) as { items: { status: string }[] }).items.map((p) => p.status);
      })
      .toEqual(['ok', 'ok', 'ok']);
    const res = await box.get('/printing-api/api/printers', staff);
    expect(res.status).toBe(200);
    const { items } = (await (await contractsOf(box)).json('GET', '/printing-api/api/printers', res)) as {
      items: Record<string, unknown>[];
    };
    expect(items[0]).toStrictEqual({
      name: 'hot',
      venue: VENUE,
      role: 'kitchen',
      path: hot.boxPath,
      backup: null,
      categories: ['soups', 'mains'],
      status: 'ok',
      statusSince: expect.any(String),
      divertedTo: null,
      queueDepth: 0,
      oldestJobAgeMs: null,
      lastError: null,
    });
    expect(items.map((p) => p.name)).toEqual(['hot', 'bar', 'counter']);
  });

  test('reprint: a new job that prints COPY / KOPIA, on the same printer or another of the venue', async () => {
    const order = await submittedOrder([{ productId: 'barszcz', quantity: 1 }]);
    await hot.waitForTicketWith(order.claimCode);
    await expect
      .poll(async () => (await jobsOf('?printer=hot&state=printed')).some((j) => j.orderId === order.id))
      .toBe(true);
    const original = (await jobsOf('?printer=hot')).find((j) => j.orderId === order.id)!;
    await idle();
    const hotBefore = hot.tickets().length;

    const res = await box.post(`/printing-api/api/jobs/${original.id}/reprint`, staff, '');
    expect(res.status).toBe(201);
    const copy = (await (await contractsOf(box)).json('POST', '/printing-api/api/jobs/{id}/reprint', res)) as JobItem;
    expect(copy).toMatchObject({ printer: 'hot', kind: 'kitchen', copyOf: original.id, orderId: order.id });
    expect(copy.id).not.toBe(original.id);
    const reprinted = (await hot.waitForTickets(hotBefore + 1)).at(-1)!;
    expect(ticketText(reprinted)).toContain('*** KOPIA / COPY ***');
    expect(ticketText(reprinted)).toContain('1 x Barszcz czerwony');

    const barBefore = bar.tickets().length;
    const elsewhere = await box.post(`/printing-api/api/jobs/${original.id}/reprint`, staff, { printer: 'bar' });
    expect(elsewhere.status).toBe(201);
    expect(ticketText((await bar.waitForTickets(barBefore + 1)).at(-1)!)).toContain('1 x Barszcz czerwony');
    await expect.poll(async () => (await jobsOf('?state=queued')).length).toBe(0);
    expect(hot.tickets()).toHaveLength(hotBefore + 1); // printed once, not again
  });

  test('bad requests: unknown state, unknown printer or job, a customer token, no token', async () => {
    await expectApiError(await box.get('/printing-api/api/jobs?state=lost', staff), 400, 'invalidField', ['state']);
    await expectApiError(await box.get('/printing-api/api/jobs?limit=0', staff), 400, 'invalidField', ['limit']);
    await expectApiError(await box.get('/printing-api/api/jobs?printer=nope', staff), 404, 'notFound');
    const missing = '00000000-0000-4000-8000-000000000000';
    await expectApiError(await box.post(`/printing-api/api/jobs/${missing}/reprint`, staff, {}), 404, 'notFound');
    await expectApiError(await box.post('/printing-api/api/jobs/not-a-uuid/reprint', staff, {}), 404, 'notFound');
    const order = await submittedOrder([{ productId: 'zurek', quantity: 1 }]); // a job of this test's own
    const job = (await jobsOf('?printer=hot')).find((j) => j.orderId === order.id)!;
    await expectApiError(
      await box.post(`/printing-api/api/jobs/${job.id}/reprint`, staff, { printer: 'elsewhere' }),
      400,
      'invalidField',
      ['/printer'],
    );
    await expectApiError(
      await box.post(`/printing-api/api/jobs/${job.id}/reprint`, staff, { copies: 2 }),
      400,
      'invalidField',
    );
    await expectApiError(await box.get('/printing-api/api/printers', customer), 403, 'forbidden');
    await expectApiError(await box.post(`/printing-api/api/jobs/${job.id}/reprint`, customer, {}), 403, 'forbidden');
    await expectApiError(await box.get('/printing-api/api/jobs'), 401, 'unauthorized');
  });
});
