// Printing benchmark.
//  1. Tickets encoded per second: encodeTicket (src/modules/printing/tickets.ts) of a kitchen ticket (4 lines)
//     and of a claim slip (4 lines, totals, QR code), cp852, 42 columns.
//  2. Submit to the last byte on a serial line: the bundled box (dist/main.cjs) with one kitchen printer on a
//     socat pseudo-terminal pair opened at 19200 baud (test/support/fake-printer.ts answers DLE EOT 4 and
//     collects the bytes); one order at a time, from the POST of `submit` until the ticket's cut has arrived.
//     A pty does not pace bytes at the baud rate, so the serial line's own time for the ticket's bytes at
//     19200 baud (10 bits a byte) is computed and added for the estimate on a real printer.
// Prints the figures; the last line is one JSON object with the same figures.
// Usage: npm run bench:printing   (or: node scripts/bench-printing.mjs after npm run build; needs socat)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { demo, quantile, startBox, token } from './lib/box.mjs';

const root = new URL('..', import.meta.url).pathname;
const venue = demo.venues[0].id;
const BAUD = 19200;
const ORDERS = 30;

/** Bundles a TypeScript module of the repository into dist/bench-printing/ (node_modules stays reachable). */
async function load(entry, name) {
  const outdir = join(root, 'dist/bench-printing');
  mkdirSync(outdir, { recursive: true });
  const outfile = join(outdir, `${name}.mjs`);
  await build({
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'warning',
  });
  return import(pathToFileURL(outfile).href);
}

const round = (n, d = 2) => Number(n.toFixed(d));

function encodeRate(encodeTicket, ticket) {
  const format = { columns: 42, codePage: 'cp852' };
  for (let i = 0; i < 200; i++) encodeTicket(ticket, format); // warm-up
  let n = 0;
  let bytes = 0;
  const started = performance.now();
  while (performance.now() - started < 1500) {
    bytes = encodeTicket(ticket, format).length;
    n++;
  }
  return { perSec: Math.round(n / ((performance.now() - started) / 1000)), bytes };
}

const { encodeTicket } = await load('src/modules/printing/tickets.ts', 'tickets');
const { startFakePrinter } = await load('test/support/fake-printer.ts', 'fake-printer');

const lines = [
  { quantity: 2, name: 'Żurek', category: 'soups', price: '36.00' },
  { quantity: 1, name: 'Gęś pieczona', category: 'mains', price: '58.00' },
  { quantity: 3, name: 'Pierogi ruskie', category: 'mains', price: '72.00' },
  { quantity: 2, name: 'Kompot', category: 'drinks', price: '14.00' },
];
const base = {
  venueName: 'Pod Wawelem (Rynek)',
  orderType: 'TAKE_AWAY',
  claimCode: '042137',
  orderId: '7c3fc4a0-122e-4121-9f94-91835435e5c9',
  at: Date.now(),
  timeZone: 'Europe/Warsaw',
  lines,
};
const kitchen = encodeRate(encodeTicket, { ...base, kind: 'kitchen', round: 1 });
const claim = encodeRate(encodeTicket, { ...base, kind: 'claim', total: '180.00' });
console.log(`encode kitchen ticket   ${String(kitchen.perSec).padStart(7)} tickets/s  (${kitchen.bytes} bytes)`);
console.log(`encode claim slip (QR)  ${String(claim.perSec).padStart(7)} tickets/s  (${claim.bytes} bytes)`);

const work = mkdtempSync(join(tmpdir(), 'vb-bench-print-'));
const printer = await startFakePrinter(work, 'kitchen');
const configFile = join(work, 'venue-box.json');
writeFileSync(
  configFile,
  JSON.stringify({
    printers: [{ name: 'kitchen', venue, role: 'kitchen', path: printer.boxPath, baudRate: BAUD }],
  }),
);
const { proc, base: url } = await startBox(join(work, 'data'), ['--config', configFile]);
try {
  const customer = (await token(url)).access_token;
  const headers = { authorization: `Bearer ${customer}`, 'content-type': 'application/json' };
  const post = async (path, body) => {
    const res = await fetch(`${url}/ordering-api/api/order/${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const products = ['zurek', 'rosol', 'pierogi-ruskie', 'kompot'];
  const times = [];
  let ticketBytes = 0;
  for (let i = 0; i < ORDERS + 3; i++) {
    const { orderId } = await post('new', {
      orderType: 'TAKE_AWAY',
      buckets: [{ venue, lines: products.map((productId, k) => ({ productId, quantity: 1 + ((i + k) % 3) })) }],
    });
    while ((await fetch(`${url}/ordering-api/api/order/${orderId}`, { headers })).status !== 200)
      await new Promise((r) => setTimeout(r, 2));
    const before = printer.tickets().length;
    const t0 = performance.now();
    await post(`${orderId}/submit`, {});
    const tickets = await printer.waitForTickets(before + 1);
    const elapsed = performance.now() - t0;
    if (i >= 3) times.push(elapsed); // the first three warm up
    ticketBytes = tickets.at(-1).length;
  }
  times.sort((a, b) => a - b);
  const wireMs = (ticketBytes * 10 * 1000) / BAUD;
  const p50 = quantile(times, 0.5);
  const p95 = quantile(times, 0.95);
  console.log(
    `submit -> last byte on the pty (${ORDERS} orders, one at a time): p50 ${p50.toFixed(1)} ms  p95 ${p95.toFixed(1)} ms  max ${times.at(-1).toFixed(1)} ms`,
  );
  console.log(
    `kitchen ticket ${ticketBytes} bytes = ${wireMs.toFixed(0)} ms on a ${BAUD} baud line; estimated p50 on a real printer ${(p50 + wireMs).toFixed(0)} ms`,
  );
  console.log(
    JSON.stringify({
      bench: 'printing',
      node: process.version,
      cpus: cpus().length,
      cpu: cpus()[0]?.model,
      encodeKitchenPerSec: kitchen.perSec,
      encodeClaimPerSec: claim.perSec,
      kitchenTicketBytes: ticketBytes,
      claimSlipBytes: claim.bytes,
      orders: ORDERS,
      submitToLastBytePtyP50Ms: round(p50),
      submitToLastBytePtyP95Ms: round(p95),
      submitToLastBytePtyMaxMs: round(times.at(-1)),
      wireMsAt19200: round(wireMs, 1),
      estimatedSubmitToLastByteP50MsAt19200: round(p50 + wireMs, 1),
    }),
  );
} finally {
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));
  await printer.stop();
  rmSync(work, { recursive: true, force: true });
}
