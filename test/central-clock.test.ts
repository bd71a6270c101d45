import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestCentral, type TestCentral } from './support/central.js';
import { enrolledDevice } from './support/sim-device.js';

// What the central makes of a box's clock (docs/sync.md "Clocks"), with a simulated box whose clock the test sets.
let central: TestCentral;
beforeAll(async () => {
  central = await startTestCentral();
});
afterAll(async () => {
  expect(await central.stop()).toBe(0);
});

const MINUTE = 60_000;
const BOOT_1970 = Date.UTC(1970, 0, 1, 8);

describe("a box's clock at the central", () => {
  test("the backlog's age from a box in 1970: moved by the offset, or unknown once the clock was set", async () => {
    const d = await enrolledDevice(central);
    const view = async () => (await central.hq('/hq-api/api/devices')).find((x: { id: string }) => x.id === d.deviceId);
    // Online in 1970: its oldest waiting event was written two minutes ago on that clock.
    d.clockMs = BOOT_1970 + 10 * MINUTE;
    d.order();
    expect((await d.hello({ oldestPendingMs: d.clockMs - 2 * MINUTE })).status).toBe(200);
    const online = await view();
    expect(online.clockOffsetMs).toBeLessThan(-50 * 365 * 86_400_000);
    expect(Math.abs(Date.parse(online.oldestPendingAt) - (Date.now() - 2 * MINUTE))).toBeLessThan(10_000);
    // NTP set the clock; the event still waits with its 1970 stamp: when it was made is unknown, not 1970.
    d.clockMs = Date.now();
    expect((await d.hello({ oldestPendingMs: BOOT_1970 + 8 * MINUTE })).status).toBe(200);
    expect(await view()).toMatchObject({ oldestPendingAt: null, lagEvents: 1 });
    expect(Math.abs((await view()).clockOffsetMs)).toBeLessThan(10_000);
  });
});
