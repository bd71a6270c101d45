import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestBox, type TestBox } from './support/box.js';
import { type FakePrinter, STATUS_OK, STATUS_PAPER_OUT, startFakePrinter, ticketText } from './support/fake-printer.js';
import { expectApiError } from './support/fixtures.js';
import { FAST_PRINTING, jobsOf, printerOf, printersIdle, sleep, submitOrder, VENUE } from './support/printing.js';
import { openSocket } from './support/socket.js';
import { contractsOf } from './support/contracts.js';
import { skipWithout } from './support/system-packages.js';

// A receipt printer on a serial line is a socat pseudo-terminal pair (test/support/fake-printer.ts).
const skip = skipWithout(import.meta.url, 'socat');

// One kitchen printer and no counter printer: claim slips stay unrouted, visible to staff.
let box: TestBox;
let kitchen: FakePrinter;
let customer: string;
let staff: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vb-print-faults-'));
  kitchen = await startFakePrinter(dir, 'kitchen');
  box = await startTestBox({
    config: {
      printers: [{ name: 'kitchen', venue: VENUE, role: 'kitchen', path: kitchen.boxPath }],
      printing: FAST_PRINTING,
    },
  });
  customer = (await box.token()).access_token;
  staff = (await box.token('kuchnia', 'kuchnia-demo-1')).access_token;
});
afterAll(async () => {
  await box?.stop();
  await kitchen?.stop();
});

/** The claim code each kitchen ticket carries, in the order they came off the line. */
const claimCodesOnPaper = (tickets: Buffer[], codes: string[]) =>
  tickets.map((t) => codes.find((c) => ticketText(t).includes(c)) ?? '?');

test.skipIf(skip)(
  'the line goes away with jobs queued and comes back: every job printed exactly once, in order',
  async () => {
    await printersIdle(box, staff, { kitchen }); // tickets of the tests before this one are all on paper
    const before = kitchen.tickets().length;
    const first = await submitOrder(box, staff, customer, [{ productId: 'zurek', quantity: 1 }]);
    await kitchen.waitForTickets(before + 1);
    // Recorded as printed too (unplugging between the drain and that commit would print it again: at least once).
    await expect
      .poll(async () => (await jobsOf(box, staff, '?state=printed')).some((j) => j.orderId === first))
      .toBe(true);

    await kitchen.unplug();
    const queued: string[] = [];
    for (const productId of ['rosol', 'barszcz', 'placki'])
      queued.push(await submitOrder(box, staff, customer, [{ productId, quantity: 1 }]));
    await expect
      .poll(async () => printerOf(box, staff, 'kitchen'), { timeout: 5000 })
      .toMatchObject({ status: 'offline', queueDepth: 3, lastError: { reason: expect.any(String) } });
    expect((await printerOf(box, staff, 'kitchen')).oldestJobAgeMs).toBeGreaterThanOrEqual(0);
    expect(kitchen.tickets()).toHaveLength(before + 1);

    await kitchen.plugIn();
    const tickets = (await kitchen.waitForTickets(before + 4)).slice(before);
    await sleep(600); // several retry and poll periods: nothing more may come
    expect(kitchen.tickets()).toHaveLength(before + 4);

    const jobs = await jobsOf(box, staff, '?printer=kitchen');
    const codeOf = (orderId: string) => jobs.find((j) => j.orderId === orderId)!.ticket.claimCode;
    const codes = [first, ...queued].map(codeOf);
    expect(claimCodesOnPaper(tickets, codes)).toEqual(codes);
    expect(jobs.filter((j) => [first, ...queued].includes(j.orderId)).map((j) => j.state)).toEqual([
      'printed',
      'printed',
      'printed',
      'printed',
    ]);
    expect(jobs.find((j) => j.orderId === queued[0])!.attempts).toBeGreaterThan(1);
    expect((await printerOf(box, staff, 'kitchen')).status).toBe('ok');
  },
);

test.skipIf(skip)(
  'paper out: the queue holds, staff see paperOut (API and PRINTER_STATUS), printing resumes when it clears',
  async () => {
    await expect.poll(async () => (await printerOf(box, staff, 'kitchen')).status).toBe('ok');
    const venueWs = await openSocket(box.wsUrl(`/ordering-api/ws?venue=${VENUE}`), staff);
    const hello = await venueWs.next('HELLO');
    await printersIdle(box, staff, { kitchen });
    const before = kitchen.tickets().length;

    kitchen.status = STATUS_PAPER_OUT;
    const orderId = await submitOrder(box, staff, customer, [{ productId: 'zurek', quantity: 3 }]);
    const out = await venueWs.next('PRINTER_STATUS');
    (await contractsOf(box)).frame(out);
    expect(out.payload).toMatchObject({
      printer: 'kitchen',
      venue: VENUE,
      role: 'kitchen',
      status: 'paperOut',
      previous: 'ok',
    });
    await expect
      .poll(async () => printerOf(box, staff, 'kitchen'))
      .toMatchObject({ status: 'paperOut', queueDepth: 1 });
    const queries = kitchen.statusQueries;
    await kitchen.waitForQueries(queries + 2); // asked again and again, and told paper out each time
    expect(kitchen.tickets()).toHaveLength(before);
    expect((await jobsOf(box, staff, '?state=queued')).map((j) => j.orderId)).toEqual([orderId]);

    kitchen.status = STATUS_OK;
    const tickets = await kitchen.waitForTickets(before + 1);
    expect(ticketText(tickets.at(-1)!)).toContain('3 x Żurek');
    const back = await venueWs.next('PRINTER_STATUS');
    expect(back.payload).toMatchObject({
      printer: 'kitchen',
      status: 'ok',
      previous: 'paperOut',
      lastError: { reason: 'paperOut' },
    });
    expect(back.seq).toBeGreaterThan(out.seq);
    venueWs.close();

    // The frames are in the venue stream: a display reconnecting with ?since=N gets them again.
    const again = await openSocket(box.wsUrl(`/ordering-api/ws?venue=${VENUE}&since=${hello.seq}`), staff);
    await again.next('HELLO');
    expect((await again.next('PRINTER_STATUS')).seq).toBe(out.seq);
    expect((await again.next('PRINTER_STATUS')).seq).toBe(back.seq);
    again.close();
  },
);

test.skipIf(skip)(
  'a venue without a counter printer keeps its claim slips as unrouted jobs; reprinting one is a 409',
  async () => {
    const orderId = await submitOrder(box, staff, customer, [{ productId: 'kompot', quantity: 1 }]);
    const unrouted = (await jobsOf(box, staff, '?state=unrouted')).filter((j) => j.orderId === orderId);
    expect(unrouted.map((j) => [j.kind, j.printer])).toEqual([['claim', null]]);
    await expectApiError(
      await box.post(`/printing-api/api/jobs/${unrouted[0]!.id}/reprint`, staff, {}),
      409,
      'conflict',
      [VENUE],
    );
    // A kitchen printer may take it when staff name it.
    await kitchen.waitForTicketWith(unrouted[0]!.ticket.claimCode);
    await printersIdle(box, staff, { kitchen });
    const before = kitchen.tickets().length;
    const res = await box.post(`/printing-api/api/jobs/${unrouted[0]!.id}/reprint`, staff, { printer: 'kitchen' });
    expect(res.status).toBe(201);
    const slip = (await kitchen.waitForTickets(before + 1)).at(-1)!;
    expect(ticketText(slip)).toContain('ODBIÓR / PICK-UP');
    expect(ticketText(slip)).toContain('KOPIA / COPY');
  },
);
