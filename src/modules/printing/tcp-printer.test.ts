import { afterEach, beforeEach, expect, test } from 'vitest';
import {
  type FakeTcpPrinter,
  hasCut,
  STATUS_OK,
  STATUS_PAPER_OUT,
  startFakeTcpPrinter,
} from '../../../test/support/fake-printer.js';
import { PrinterError } from './printer-status.js';
import { TcpPrinter } from './tcp-printer.js';

// A real TCP "printer" on 127.0.0.1 (test/support/fake-printer.ts): bytes in, DLE EOT 4 answered.
let fake: FakeTcpPrinter;
let device: TcpPrinter;

const ticket = (text: string) =>
  Buffer.concat([Buffer.from([0x1b, 0x40]), Buffer.from(text), Buffer.from([0x1d, 0x56, 0])]);
const deviceOn = (port: number, statusQuery = true) =>
  new TcpPrinter({ host: '127.0.0.1', port, statusQuery, timeoutMs: 300 });
const reasonOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (err: unknown) => (err instanceof PrinterError ? err.reason : String(err)),
  );

beforeEach(async () => {
  fake = await startFakeTcpPrinter('tcp');
  device = deviceOn(fake.port);
});
afterEach(async () => {
  device.close();
  await fake.stop();
});

test('asks the paper status and prints over one connection kept between jobs', async () => {
  expect(await device.paperStatus()).toBe('ok');
  await device.print(ticket('first'));
  await device.print(ticket('second'));
  const tickets = await fake.waitForTickets(2);
  expect(tickets.map((t) => t.toString('latin1'))).toEqual([
    ticket('first').toString('latin1'),
    ticket('second').toString('latin1'),
  ]);
  expect(fake.connections).toBe(1);
  // With statusQuery, each print is confirmed by a status answer after its bytes: 1 + 2.
  expect(fake.statusQueries).toBe(3);
  fake.status = STATUS_PAPER_OUT;
  expect(await device.paperStatus()).toBe('out');
  fake.status = 0x1e;
  expect(await device.paperStatus()).toBe('nearEnd');
});

test('a printer that is not listening: missing (the job waits); switched on again, found again', async () => {
  await fake.switchOff();
  expect(await reasonOf(device.paperStatus())).toBe('missing');
  expect(await reasonOf(device.print(ticket('lost')))).toBe('missing');
  await fake.switchOn();
  await device.print(ticket('back'));
  expect(await fake.waitForTickets(1)).toHaveLength(1);
});

test('a printer that accepts but never answers the status: offline, and the next try connects afresh', async () => {
  fake.status = null;
  expect(await reasonOf(device.paperStatus())).toBe('offline');
  expect(await reasonOf(device.print(ticket('unconfirmed')))).toBe('offline');
  fake.status = STATUS_OK;
  expect(await device.paperStatus()).toBe('ok');
  expect(fake.connections).toBe(3);
});

test('a printer that closes the connection mid-job: the print fails, never reported done; the retry prints', async () => {
  fake.closeAfterBytes = 5;
  expect(await device.paperStatus()).toBe('ok');
  const reason = await reasonOf(device.print(ticket('cut off in the middle')));
  expect(['io', 'offline']).toContain(reason);
  expect(fake.tickets().filter(hasCut)).toHaveLength(0);
  fake.closeAfterBytes = null;
  await device.print(ticket('again'));
  expect((await fake.waitForTickets(1)).filter(hasCut)).toHaveLength(1);
});

test('a printer that closes the connection after each job: every job connects again and prints', async () => {
  fake.closeAfterTicket = true;
  for (const text of ['one', 'two', 'three']) {
    expect(await device.paperStatus()).toBe('ok');
    await device.print(ticket(text));
    await fake.waitForTickets(['one', 'two', 'three'].indexOf(text) + 1);
  }
  expect(fake.connections).toBe(3);
});

test('without statusQuery: no queries, a print resolves once the bytes are handed to the kernel', async () => {
  device.close();
  device = deviceOn(fake.port, false);
  fake.status = null;
  expect(await device.paperStatus()).toBe('ok');
  await device.print(ticket('plain'));
  expect(await fake.waitForTickets(1)).toHaveLength(1);
  expect(fake.statusQueries).toBe(0);
});

test('a host that does not answer the connect: offline after the timeout', async () => {
  device.close();
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never routed, so the SYN goes unanswered (or is refused at once).
  device = new TcpPrinter({ host: '192.0.2.1', port: 9100, statusQuery: true, timeoutMs: 200 });
  const started = Date.now();
  expect(['offline', 'missing', 'io']).toContain(await reasonOf(device.paperStatus()));
  expect(Date.now() - started).toBeLessThan(2000);
});
