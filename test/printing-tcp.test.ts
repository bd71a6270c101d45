import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestBox, type TestBox } from './support/box.js';
import { expectOneLineFailure, runCli, runCliAsync } from './support/cli.js';
import {
  type FakePrinter,
  type FakeTcpPrinter,
  hasCut,
  STATUS_OK,
  startFakePrinter,
  startFakeTcpPrinter,
  ticketText,
} from './support/fake-printer.js';
import { FAST_PRINTING, jobsOf, printerOf, printersIdle, sleep, submitOrder, VENUE } from './support/printing.js';
import { skipWithout } from './support/system-packages.js';

// The kitchen printer is on the network: a node:net server speaking raw TCP like port 9100; its backup, the
// counter printer, is on a serial line, a socat pseudo-terminal pair (test/support/fake-printer.ts).
const skip = skipWithout(import.meta.url, 'socat');

let dir: string;
let box: TestBox;
let grill: FakeTcpPrinter;
let counter: FakePrinter;
let customer: string;
let staff: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vb-print-tcp-'));
  if (skip) return;
  grill = await startFakeTcpPrinter('grill');
  counter = await startFakePrinter(dir, 'counter');
  box = await startTestBox({
    config: {
      printers: [
        { name: 'grill', venue: VENUE, role: 'kitchen', host: grill.host, port: grill.port, backup: 'counter' },
        { name: 'counter', venue: VENUE, role: 'counter', path: counter.boxPath },
      ],
      printing: { ...FAST_PRINTING, backupAfterSeconds: 1 },
    },
  });
  customer = (await box.token()).access_token;
  staff = (await box.token('kuchnia', 'kuchnia-demo-1')).access_token;
});
afterAll(async () => {
  expect(await box?.stop()).toBe(skip ? undefined : 0);
  await grill?.stop();
  await counter?.stop();
});

const idle = () => printersIdle(box, staff, { grill, counter });
/** Complete tickets on a printer's paper carrying a claim code. */
const ticketsWith = (p: FakePrinter | FakeTcpPrinter, code: string) =>
  p.tickets().filter((t) => hasCut(t) && ticketText(t).includes(code));
const claimCodeOf = async (orderId: string) =>
  (await jobsOf(box, staff, '?limit=1000')).find((j) => j.orderId === orderId)!.ticket.claimCode;

describe.skipIf(skip)('a kitchen printer on the network', () => {
  test('a submit prints the kitchen ticket over TCP; staff see its tcp:// address and status ok', async () => {
    await idle();
    const orderId = await submitOrder(box, staff, customer, [{ productId: 'zurek', quantity: 2 }]);
    const code = await claimCodeOf(orderId);
    const ticket = await grill.waitForTicketWith(code);
    expect(ticketText(ticket)).toContain('2 x Żurek');
    expect(ticketText(ticket)).not.toContain('ZAMIAST');
    await counter.waitForTicketWith(code); // the claim slip, on the serial counter printer
    await expect
      .poll(async () => (await jobsOf(box, staff, '?printer=grill')).find((j) => j.orderId === orderId))
      .toMatchObject({ state: 'printed', printedOn: 'grill', attempts: 1 });
    const res = await box.get('/printing-api/api/printers', staff);
    const items = ((await res.json()) as { items: { name: string; path: string; status: string }[] }).items;
    expect(items.find((p) => p.name === 'grill')).toMatchObject({
      path: `tcp://127.0.0.1:${grill.port}`,
      status: 'ok',
    });
    expect(items.find((p) => p.name === 'counter')).toMatchObject({ path: counter.boxPath });
  });

  test('the printer switched off: offline, its ticket goes to the serial backup; back on, it prints again', async () => {
    await idle();
    await grill.switchOff();
    try {
      const orderId = await submitOrder(box, staff, customer, [{ productId: 'rosol', quantity: 1 }]);
      const code = await claimCodeOf(orderId);
      await expect
        .poll(async () => printerOf(box, staff, 'grill'), { timeout: 5000 })
        .toMatchObject({ status: 'offline', lastError: { reason: 'missing' } });
      // After backupAfterSeconds (1 s) the counter printer takes the grill's queue, each ticket headed FOR: grill.
      const diverted = await counter.waitForTicketWith('ZAMIAST / FOR: grill');
      expect(ticketText(diverted)).toContain(code);
      await expect
        .poll(async () => (await jobsOf(box, staff, '?printer=grill')).find((j) => j.orderId === orderId))
        .toMatchObject({ state: 'printed', printedOn: 'counter' });
      expect((await printerOf(box, staff, 'grill')).divertedTo).toBe('counter');
      expect(ticketsWith(grill, code)).toHaveLength(0);
    } finally {
      await grill.switchOn();
    }
    await expect.poll(async () => (await printerOf(box, staff, 'grill')).status, { timeout: 5000 }).toBe('ok');
    const orderId = await submitOrder(box, staff, customer, [{ productId: 'barszcz', quantity: 1 }]);
    await grill.waitForTicketWith(await claimCodeOf(orderId));
  });

  test('the printer resets the connection mid-ticket: the job is retried, never marked printed, then printed once', async () => {
    await idle();
    grill.closeAfterBytes = 20;
    let code: string;
    let orderId: string;
    try {
      orderId = await submitOrder(box, staff, customer, [{ productId: 'placki', quantity: 1 }]);
      code = await claimCodeOf(orderId);
      await expect
        .poll(async () => (await jobsOf(box, staff, '?printer=grill')).find((j) => j.orderId === orderId)!.attempts)
        .toBeGreaterThan(1);
      const job = (await jobsOf(box, staff, '?printer=grill')).find((j) => j.orderId === orderId)!;
      expect(job.state).toBe('queued');
      expect(job.lastError).toMatch(/tcp:\/\/127\.0\.0\.1/);
      expect(ticketsWith(grill, code)).toHaveLength(0);
    } finally {
      grill.closeAfterBytes = null;
    }
    await expect
      .poll(async () => (await jobsOf(box, staff, '?printer=grill')).find((j) => j.orderId === orderId)!.state)
      .toBe('printed');
    await sleep(600); // several retry periods: no second copy
    const copies =
      ticketsWith(grill, code).length +
      ticketsWith(counter, code).filter((t) => ticketText(t).includes('ZAMIAST')).length;
    expect(copies).toBe(1);
  });

  test('the printer accepts but never answers the status query: offline; answering again: ok', async () => {
    await idle();
    grill.status = null;
    try {
      await expect
        .poll(async () => printerOf(box, staff, 'grill'), { timeout: 5000 })
        .toMatchObject({ status: 'offline', lastError: { reason: 'offline' } });
    } finally {
      grill.status = STATUS_OK;
    }
    await expect.poll(async () => (await printerOf(box, staff, 'grill')).status, { timeout: 5000 }).toBe('ok');
  });
});

describe.skipIf(skip)('venue-box printers with a network printer', () => {
  test('list says whether it answers; test prints the test page over TCP', async () => {
    const off = await startFakeTcpPrinter('off');
    await off.switchOff();
    const bar = await startFakeTcpPrinter('bar');
    try {
      const file = join(dir, 'cli.jsonc');
      writeFileSync(
        file,
        JSON.stringify({
          printers: [
            { name: 'bar', venue: VENUE, role: 'kitchen', host: bar.host, port: bar.port },
            { name: 'off', venue: VENUE, role: 'counter', host: off.host, port: off.port },
          ],
          printing: { statusTimeoutMs: 300 },
        }),
      );
      const list = await runCliAsync(['printers', 'list', '--config', file], 15_000);
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(
        new RegExp(`bar\\s+kitchen\\s+venue ${VENUE}\\s+tcp://127\\.0\\.0\\.1:${bar.port} \\(answers\\)\\s+42 columns`),
      );
      expect(list.stdout).toMatch(
        new RegExp(`off\\s+counter.*tcp://127\\.0\\.0\\.1:${off.port} \\(NOT ANSWERING: ECONNREFUSED\\)`),
      );

      const printed = await runCliAsync(['printers', 'test', 'bar', '--config', file], 15_000);
      expect(printed).toMatchObject({ code: 0 });
      expect(printed.stdout).toMatch(
        new RegExp(`^test page printed on bar \\(tcp://127\\.0\\.0\\.1:${bar.port}, cp852, \\d+ bytes\\)$`, 'm'),
      );
      expect(ticketText((await bar.waitForTickets(1))[0]!)).toContain('Żurek, Gęś, Łódź');

      const refused = await runCliAsync(['printers', 'test', 'off', '--config', file], 15_000);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /^venue-box: off: cannot connect to tcp:\/\/127\.0\.0\.1:\d+: ECONNREFUSED \(is it on/,
      );
    } finally {
      await bar.stop();
    }
  });
});

describe('a printer with both or neither of path and host', () => {
  test.each([
    [
      'both',
      { path: '/dev/receipt-grill', host: '192.168.1.50' },
      /\/printers\/0: printer grill needs exactly one of "path" \(a serial printer\) or "host" \(a network printer\), not both$/,
    ],
    [
      'neither',
      {},
      /\/printers\/0: printer grill needs exactly one of "path" \(a serial printer\) or "host" \(a network printer\)$/,
    ],
    [
      'a port without a host',
      { path: '/dev/receipt-grill', port: 9100 },
      /\/printers\/0\/port: printer grill is a serial printer/,
    ],
    ['a URL as the host', { host: 'tcp://192.168.1.50:9100' }, /\/printers\/0\/host/],
  ])('%s: the box refuses to start, exit 78, one line naming the printer', (_name, where, pattern) => {
    const file = join(dir, `bad-${_name.replace(/\W+/g, '-')}.jsonc`);
    writeFileSync(file, JSON.stringify({ printers: [{ name: 'grill', venue: VENUE, role: 'kitchen', ...where }] }));
    const r = runCli([
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--data-dir',
      join(dir, 'data'),
      '--config',
      file,
    ]);
    expectOneLineFailure(r, pattern, 78);
    expect(r.stderr).toContain(file);
  });
});
