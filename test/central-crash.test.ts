import { afterAll, expect, test } from 'vitest';
import { CENTRAL_DEMO, startTestCentral, type TestCentral } from './support/central.js';
import { SimDevice } from './support/sim-device.js';

let central: TestCentral | undefined;
afterAll(async () => {
  await central?.stop();
});

test('kill -9 during a stream of batches, restart on the same data dir, resend everything: each event exactly once', async () => {
  central = await startTestCentral();
  const d = new SimDevice(central.url(''));
  expect((await d.enrol(await central.enrolCode(CENTRAL_DEMO.venues[0]!))).status).toBe(201);
  const total = 3000;
  for (let i = 0; i < total; i++) d.order();

  // Stream batches until the central dies under them; acknowledgements seen are the box's confirmed state.
  let acked = 0;
  const stream = (async () => {
    for (let seq = 1; seq <= total; seq += 100) {
      try {
        const a = await d.send(seq, seq + 99);
        if (a.status === 200) acked = a.body.ackedSeq;
      } catch {
        return; // connection refused or reset: the central is gone
      }
    }
  })();
  // Killed once a part is acknowledged, whatever the machine's speed: mid-stream by construction.
  while (acked < 500) await new Promise((r) => setTimeout(r, 5));
  const dataDir = central.dataDir;
  expect(await central.stop('SIGKILL')).toBeNull();
  await stream;
  expect(acked).toBeLessThan(total);

  // The killed central's PostgreSQL is still running; the new central stops it and starts its own.
  central = await startTestCentral({ dataDir });
  (d as { baseUrl: string }).baseUrl = central.url('');
  const hello = await d.hello();
  expect(hello.status).toBe(200);
  // Nothing acknowledged was lost: the head is at least where the last ack said.
  expect(hello.body.head.seq).toBeGreaterThanOrEqual(acked);
  const answers = await d.drain(1, 250);
  expect(answers.every((a) => a.status === 200)).toBe(true);

  const tail: number[] = [];
  for (let after = 0; ; ) {
    const page = await d.tail(after, 1000);
    if (page.body.events.length === 0) break;
    tail.push(...page.body.events.map((e: { seq: number }) => e.seq));
    after = tail[tail.length - 1]!;
  }
  expect(tail).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  let orders = 0;
  for (let after: string | null = null, first = true; first || after; first = false) {
    const page: { items: unknown[]; next: string | null } = await central.hq(
      `/hq-api/api/orders?deviceId=${d.deviceId}&limit=200${after ? `&after=${after}` : ''}`,
    );
    orders += page.items.length;
    after = page.next;
  }
  expect(orders).toBe(total);
  const devices = await central.hq('/hq-api/api/devices');
  expect(devices[0]).toMatchObject({
    id: d.deviceId,
    head: { seq: total, hash: d.events[total - 1]!.hash },
    deadLetters: 0,
  });
}, 55_000);
