import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.js';
import { command, newOrder } from './support/orders.js';
import { drained, enrol, FAST_SYNC, hqOrders, syncStatus, waitFor } from './support/sync.js';
import { SYSTEM_PACKAGES, skipWithout } from './support/system-packages.js';
import { staff, W1, W2, wpath } from './warehouse-client.js';

// A box with no real-time clock after a power cut: it comes up on 1 January 1970 and runs so until NTP answers
// (docs/sync.md "Clocks"). libfaketime (Debian's faketime) reads the box's clock from a file that the test
// rewrites while the box runs, as NTP would set it; the monotonic clock stays real, as under NTP.
const skip = skipWithout(import.meta.url, 'faketime');
const DAY = 86_400_000;

let box: TestBox | undefined;
let central: TestCentral | undefined;
let proxy: FaultProxy | undefined;
const clockDir = mkdtempSync(join(tmpdir(), 'vb-clock-'));
const clockFile = join(clockDir, 'faketime');
afterAll(async () => {
  await box?.stop();
  await proxy?.close();
  await central?.stop();
  rmSync(clockDir, { recursive: true, force: true });
});

/** The box's clock from now on: a libfaketime spec (`@1970-01-01 08:00:00` starts there and runs; `+0` is right). */
const setBoxClock = (spec: string) => writeFileSync(clockFile, `${spec}\n`);

const CLOCK_ENV = {
  LD_PRELOAD: SYSTEM_PACKAGES.faketime,
  FAKETIME_TIMESTAMP_FILE: clockFile,
  FAKETIME_NO_CACHE: '1',
  FAKETIME_DONT_FAKE_MONOTONIC: '1',
  FAKETIME_DONT_RESET: '1',
};

/** The venue's local date `days` from today (Pod Wawelem is in Warsaw), as HQ's order search takes it. */
const warsawDate = (days: number) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Warsaw' }).format(new Date(Date.now() + days * DAY));

async function expectStockAsAtBox(b: TestBox, c: TestCentral): Promise<void> {
  const s = await staff(b);
  for (const w of [W1, W2]) {
    const res = await b.post(wpath(w, '/stock'), s.token, { items: ['mleko'] }, s.headers);
    const mine = ((await res.json()) as { items: { qty: number }[] }).items[0]!.qty;
    const hq = (await c.hq(`/hq-api/api/stock?warehouseId=${w}`)).items.find((i: { id: string }) => i.id === 'mleko');
    expect({ warehouse: w, qty: hq?.qty ?? 0 }).toEqual({ warehouse: w, qty: mine });
  }
}

describe.skipIf(skip)('a box whose clock says 1970', () => {
  test('loses nothing at the central: no dead letters, orders on their real day, stock equal after the clock is set', async () => {
    central = await startTestCentral();
    proxy = await startFaultProxy(central.port);
    setBoxClock('@1970-01-01 08:00:00');
    box = await startTestBox({ config: FAST_SYNC, env: CLOCK_ENV });
    await enrol(box, proxy.url, await central.enrolCode(DEMO.openVenue));
    const orders: string[] = [];
    const order = async (token: string, productId: string) => {
      const o = await command(box!, token, 'new', newOrder(DEMO.openVenue, [{ productId, quantity: 1 }]));
      await command(box!, token, `${o.orderId}/submit`, {});
      orders.push(o.orderId);
      return o.orderId;
    };
    const doc = async (token: string, headers: Record<string, string>, kind: string, body: object) => {
      const res = await box!.post(wpath(W1, `/documents/${kind}`), token, body, headers);
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as { created: string };
    };

    // Online in 1970: the central knows the offset from the box's hellos.
    let s = await staff(box);
    const first = await order(s.token, 'zurek');
    const pz = await doc(s.token, s.headers, 'pz', { items: [{ id: 'mleko', unit: 'l', qty: 12.5 }] });
    expect(pz.created.startsWith('1970-')).toBe(true);
    await drained(box);
    let device = (await central.hq('/hq-api/api/devices'))[0];
    expect(device.clockOffsetMs).toBeLessThan(-50 * 365 * DAY);
    expect(device.deadLetters).toBe(0);

    // Offline in 1970 (no internet, so no NTP either), then the clock is set and the central is back at once:
    // these events were written on the wrong clock and reach a central that has just measured a right one.
    proxy.set('down');
    await order(s.token, 'rosol');
    await doc(s.token, s.headers, 'mm', { targetWarehouse: W2, items: [{ id: 'mleko', unit: 'l', qty: 2.25 }] });
    await waitFor('the backlog', async () => ((await syncStatus(box!)).backlog >= 3 ? true : undefined));
    setBoxClock('+0');
    proxy.set('pass');
    let status = await drained(box);
    expect(status.deadLetters).toBe(0);

    // On the right clock now: a new token (the 1970 one has expired), more orders and a document.
    s = await staff(box);
    await order(s.token, 'pierogi-ruskie');
    await doc(s.token, s.headers, 'rw', { items: [{ id: 'mleko', unit: 'l', qty: 1.5 }] });
    // The first order, taken online in 1970, is ready now: its new version still says it was created in 1970.
    await command(box, s.token, `${first}/ready`, {});
    status = await drained(box);
    device = (await central.hq('/hq-api/api/devices'))[0];
    expect(device).toMatchObject({ deadLetters: 0, head: { seq: status.newestSeq } });
    expect(status.deadLetters).toBe(0);
    await waitFor('a hello on the right clock', async () => {
      const d = (await central!.hq('/hq-api/api/devices'))[0];
      return Math.abs(d.clockOffsetMs) < 5_000 ? d : undefined;
    });

    // Every order once; the box's own time kept as data; listed on its real day, not in 1970.
    const all = await hqOrders(central, DEMO.openVenue);
    for (const id of orders) expect(all.filter((o) => o.id === id)).toHaveLength(1);
    expect((await central.hq(`/hq-api/api/orders/${first}`)).created.startsWith('1970-')).toBe(true);
    // Newest first: the first order keeps the instant its first version was given, and stays the oldest.
    expect(all.map((o) => o.id)).toEqual([...orders].reverse());
    const days = await central.hq(
      `/hq-api/api/orders?venueId=${DEMO.openVenue}&from=${warsawDate(-1)}&to=${warsawDate(1)}&limit=200`,
    );
    expect(days.items.map((o: { id: string }) => o.id).sort()).toEqual([...orders].sort());
    await expectStockAsAtBox(box, central);
  }, 120_000);
});
