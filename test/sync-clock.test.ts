import { afterAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { command, newOrder } from './support/orders.js';
import { drained, enrol, FAST_SYNC, hqOrders } from './support/sync.js';
import { SYSTEM_PACKAGES, skipWithout } from './support/system-packages.js';
import { staff } from './warehouse-client.js';

// The box's clock is data, never a gate (docs/sync.md "Sync to the central node"). libfaketime (Debian's faketime,
// installed by .ci/run) moves the box process's clock.
const LIBFAKETIME = SYSTEM_PACKAGES.faketime;
const skip = skipWithout(import.meta.url, 'faketime');
const fake = (offset: string) => ({ LD_PRELOAD: LIBFAKETIME, FAKETIME: offset, FAKETIME_DONT_RESET: '1' });
const DAY = 86_400_000;

let box: TestBox | undefined;
let central: TestCentral | undefined;
afterAll(async () => {
  await box?.stop();
  await central?.stop();
});

describe.skipIf(skip)('clock skew', () => {
  test('a box clock a year ahead, then jumping back: accepted, in sequence order, the offset reported', async () => {
    central = await startTestCentral();
    box = await startTestBox({ config: FAST_SYNC, env: fake('+365d') });
    await enrol(box, central.url(''), await central.enrolCode(DEMO.openVenue));
    const ahead: string[] = [];
    let s = await staff(box);
    for (let i = 0; i < 2; i++)
      ahead.push(
        (await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 1 }]))).orderId,
      );
    await drained(box);
    let device = (await central.hq('/hq-api/api/devices'))[0];
    expect(device.clockOffsetMs).toBeGreaterThan(364 * DAY);
    const first = await central.hq(`/hq-api/api/orders/${ahead[0]}`);
    expect(Date.parse(first.created) - Date.now()).toBeGreaterThan(364 * DAY); // the box's time, kept as data

    // The clock jumps back a year and a day (a dead RTC battery, then NTP): later events carry earlier times.
    const { dataDir } = box;
    await box.stop();
    box = await startTestBox({ dataDir, config: FAST_SYNC, env: fake('-1d') });
    s = await staff(box);
    const behind: string[] = [];
    for (let i = 0; i < 2; i++)
      behind.push(
        (await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'rosol', quantity: 1 }]))).orderId,
      );
    const status = await drained(box);
    device = (await central.hq('/hq-api/api/devices'))[0];
    expect(device.clockOffsetMs).toBeLessThan(-0.9 * DAY);
    expect(device.head.seq).toBe(status.newestSeq);
    expect(device.deadLetters).toBe(0);
    const all = await hqOrders(central, DEMO.openVenue);
    for (const id of [...ahead, ...behind]) expect(all.filter((o) => o.id === id)).toHaveLength(1);
    // Order is the sequence: the events from the earlier clock come after the later ones.
    const seqOf = async (id: string) =>
      ((await central!.hq(`/hq-api/api/orders/${id}/versions`)) as { seq: number }[])[0]!.seq;
    expect(await seqOf(behind[0]!)).toBeGreaterThan(await seqOf(ahead[1]!));
    // Yet every one is listed on its real day, the box's offset taken off (docs/sync.md "Clocks").
    const day = (days: number) =>
      new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Warsaw' }).format(new Date(Date.now() + days * DAY));
    const today = await central.hq(
      `/hq-api/api/orders?venueId=${DEMO.openVenue}&from=${day(-1)}&to=${day(1)}&limit=200`,
    );
    expect(today.items.map((o: { id: string }) => o.id).sort()).toEqual([...ahead, ...behind].sort());
  }, 60_000);
});
