import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox, UNLIMITED_CUSTOMER } from './support/box.js';
import { command, newOrder } from './support/orders.js';
import { openSocket, type TestSocket } from './support/socket.js';
import { skipWithout } from './support/system-packages.js';

// Debian's promtool (package prometheus) checks /metrics as Prometheus' own CI lints an exposition
// (docs/operations.md "Health: metrics, readiness and the watchdog").
const skip = skipWithout(import.meta.url, 'prometheus');

const boxes: TestBox[] = [];
const sockets: TestSocket[] = [];
afterAll(async () => {
  for (const s of sockets) s.close();
  for (const box of boxes) await box.stop();
});

/** `promtool check metrics` on the text: its exit status and what it said (nothing when the text passes). */
function promtool(text: string): { status: number | null; said: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: run.status, said: `${run.stdout}${run.stderr}`.trim() };
}

describe.skipIf(skip)('promtool check metrics', () => {
  test("the box's /metrics passes, with every family that has moved (orders, sockets, printers, sync)", async () => {
    const box = await startTestBox({
      config: {
        ...UNLIMITED_CUSTOMER,
        // A printer that is not there: the printer families carry series too.
        printers: [{ name: 'kuchnia', venue: DEMO.openVenue, role: 'kitchen', host: '127.0.0.1', port: 9 }],
      },
    });
    boxes.push(box);
    const staff = (await box.token(DEMO.staff.username, DEMO.staff.password)).access_token;
    const guest = (await box.token()).access_token;
    const ws = await openSocket(box.wsUrl('/ordering-api/ws'), guest);
    sockets.push(ws);
    await ws.next('HELLO');
    await command(box, guest, 'new', newOrder(DEMO.openVenue, [{ productId: 'woda', quantity: 1 }]));
    await ws.next('ORDER_CHANGE');

    const res = await box.get('/metrics', staff);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('venue_box_commands_confirmed_total{kind="new"} 1');
    expect(text).toContain('nodejs_active_handles{');
    expect(promtool(text)).toEqual({ status: 0, said: '' });
  });
});
