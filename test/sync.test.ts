import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { chainHash, envelopeText } from '../src/shared/sync-protocol.js';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.js';
import { command, newOrder } from './support/orders.js';
import { drained, enrol, FAST_SYNC, hqOrders, outboxOf, syncCli, syncStatus, waitFor } from './support/sync.js';
import { STORY } from './support/story.js';
import { staff, W1, W2, wpath } from './warehouse-client.js';

// A real box and a real central (embedded PostgreSQL), with the fault proxy between them.
let central: TestCentral;
let proxy: FaultProxy;
let box: TestBox;

beforeAll(async () => {
  central = await startTestCentral();
  proxy = await startFaultProxy(central.port);
  box = await startTestBox({ config: FAST_SYNC });
}, 60_000);
afterAll(async () => {
  await box?.stop();
  await proxy?.close();
  await central?.stop();
});

async function stockAtBox(warehouse: string, items: string[]) {
  const s = await staff(box);
  const res = await box.post(wpath(warehouse, '/stock'), s.token, { items }, s.headers);
  expect(res.status).toBe(200);
  return (await res.json()) as { items: { id: string; unit: string | null; qty: number }[] };
}

describe('a box enrolled at a central', STORY, () => {
  test('before enrolment the box takes orders and keeps them in its outbox; status says it is not enrolled', async () => {
    const token = (await box.token('kelner', 'kelner-demo-1')).access_token;
    await command(box, token, 'new', newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 1 }]));
    const s = await waitFor('the order in the outbox', async () => {
      const st = await syncStatus(box);
      return st.backlog >= 1 ? st : undefined;
    });
    expect(s).toMatchObject({ central: null, deviceId: null, lastSuccessAt: null, deadLetters: 0, ackedSeq: 0 });
    expect(s.oldestUnsyncedAgeS).toBeGreaterThanOrEqual(0);
    // Staff only.
    expect((await box.get('/sync-api/api/status')).status).toBe(401);
    expect((await box.get('/sync-api/api/status', (await box.token()).access_token)).status).toBe(403);
    const res = await box.get('/sync-api/api/status', token);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ central: null, backlog: s.backlog });
  });

  test('a wrong or used code is refused with a one-line reason, and nothing is written', async () => {
    const bad = await syncCli([
      'enrol',
      '--data-dir',
      box.dataDir,
      '--central',
      proxy.url,
      '--code',
      'AAAA-BBBB-CCCC-DDDD',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^venue-box sync: central answered 401/);
    const unreachable = await syncCli([
      'enrol',
      '--data-dir',
      box.dataDir,
      '--central',
      'http://127.0.0.1:1',
      '--code',
      'X',
    ]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/central unreachable/);
    expect((await syncStatus(box)).deviceId).toBeNull();
  });

  test('after enrolment the running box sends what it held and every new change: orders, documents, sold-out', async () => {
    await enrol(box, proxy.url, await central.enrolCode(DEMO.openVenue));
    const again = await syncCli([
      'enrol',
      '--data-dir',
      box.dataDir,
      '--central',
      proxy.url,
      '--code',
      'AAAA-BBBB-CCCC-DDDD',
    ]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/enrolled already/);

    const s = await staff(box);
    const order = await command(
      box,
      s.token,
      'new',
      newOrder(DEMO.openVenue, [{ productId: 'pierogi-ruskie', quantity: 2 }]),
    );
    await command(box, s.token, `${order.orderId}/submit`, {});
    await command(box, s.token, `${order.orderId}/ready`, {});
    const pz = await box.post(
      wpath(W1, '/documents/pz'),
      s.token,
      { items: [{ id: 'mleko', unit: 'l', qty: 12.5 }] },
      s.headers,
    );
    expect(pz.status).toBe(201);
    const mm = await box.post(
      wpath(W1, '/documents/mm'),
      s.token,
      { targetWarehouse: W2, items: [{ id: 'mleko', unit: 'l', qty: 2.25 }] },
      s.headers,
    );
    expect(mm.status).toBe(201);
    const lock = await fetch(box.url(`/menu-api/api/menu/${DEMO.menu}/locks`), {
      method: 'PUT',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ venue: DEMO.openVenue, productId: 'barszcz', locked: true, reason: 'brak buraków' }),
    });
    expect(lock.status).toBe(200);

    const status = await drained(box);
    expect(status).toMatchObject({ central: proxy.url, backlog: 0, lastError: null, deadLetters: 0 });
    expect(status.lastSuccessAt).not.toBeNull();
    expect(status.oldestUnsyncedAgeS).toBeNull();

    // The central has the order as the box has it now, with its version (new, submit, ready).
    const atBox = (await (await box.get(`/ordering-api/api/order/${order.orderId}`, s.token)).json()) as Record<
      string,
      unknown
    >;
    const atCentral = await central.hq(`/hq-api/api/orders/${order.orderId}`);
    expect(atCentral).toMatchObject({ ...atBox, deviceId: status.deviceId, version: 3 });
    const list = await hqOrders(central, DEMO.openVenue);
    expect(list.map((o) => o.id)).toContain(order.orderId);
    // Stock per warehouse at the central equals the box's.
    for (const w of [W1, W2]) {
      const hq = await central.hq(`/hq-api/api/stock?warehouseId=${w}`);
      const mine = await stockAtBox(w, ['mleko']);
      expect(hq.items.find((i: { id: string }) => i.id === 'mleko')).toMatchObject({
        qty: mine.items[0]!.qty,
        unit: 'l',
      });
    }
    // The device, at the central: its head is the box's newest event, no lag, a fresh contact.
    const devices = await central.hq('/hq-api/api/devices');
    const device = devices.find((d: { id: string }) => d.id === status.deviceId);
    expect(device).toMatchObject({ head: { seq: status.newestSeq }, lagEvents: 0 });
    expect(Date.now() - Date.parse(device.lastContactAt)).toBeLessThan(30_000);
    expect(Math.abs(device.clockOffsetMs)).toBeLessThan(5_000);
    // Every event reached the central once, in the box's order: the kinds the outbox holds.
    expect(new Set(outboxOf(box).map((r) => r.kind))).toEqual(
      new Set(['order.changed', 'stock.document', 'soldout.changed']),
    );
  });

  test('while the central is unreachable the box keeps taking orders; they drain when it is back', async () => {
    proxy.set('down');
    const s = await staff(box);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'kompot', quantity: 1 }]))).orderId,
      );
    }
    const stuck = await waitFor('an error in the status', async () => {
      const st = await syncStatus(box);
      return st.backlog >= 5 && st.lastError ? st : undefined;
    });
    expect(stuck.lastError).toMatch(/unreachable|central/);
    proxy.set('pass');
    await drained(box);
    const at = await hqOrders(central, DEMO.openVenue);
    for (const id of ids) expect(at.filter((o) => o.id === id)).toHaveLength(1);

    // An outage with nothing to send: the next hello that gets through clears the error (a success too).
    proxy.set('down');
    const failed = await waitFor('a failed hello', async () =>
      (await syncStatus(box)).lastError ? syncStatus(box) : undefined,
    );
    proxy.set('pass');
    const healed = await waitFor('a successful hello', async () => {
      const st = await syncStatus(box);
      return st.lastError === null ? st : undefined;
    });
    expect(Date.parse(healed.lastSuccessAt!)).toBeGreaterThan(Date.parse(failed.lastErrorAt ?? failed.lastSuccessAt!));
  });

  test("while its batches fail, the box's hellos tell headquarters how old its backlog is; sent, it is cleared", async () => {
    // Batches cut off ('down'; the lost-acknowledgement test counts the injected 500s), hellos through.
    proxy.set('down', { pathPrefix: '/sync-api/api/batches' });
    const s = await staff(box);
    const before = Date.now();
    await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'kompot', quantity: 1 }]));
    const waiting = await waitFor('the backlog seen at the central', async () => {
      const device = (await central.hq('/hq-api/api/devices'))[0];
      return device.oldestPendingAt ? device : undefined;
    });
    // Box and central share this machine's clock: the time the order was written, less the measured offset.
    expect(Date.parse(waiting.oldestPendingAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(waiting.oldestPendingAt)).toBeLessThanOrEqual(Date.now());
    proxy.set('pass');
    await drained(box);
    await waitFor('the backlog cleared at the central', async () =>
      (await central.hq('/hq-api/api/devices'))[0].oldestPendingAt === null ? true : undefined,
    );
  });

  test('a lost acknowledgement, a duplicated batch and a failing central never lose or double an event', async () => {
    const s = await staff(box);
    const before = (await central.hq('/hq-api/api/devices'))[0];
    proxy.set('loseAck', { pathPrefix: '/sync-api/api/batches', times: 1 });
    const a = await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'woda', quantity: 1 }]));
    await waitFor('the lost answer', () => (proxy.seen.get('/sync-api/api/batches answer-dropped') ?? 0) >= 1);
    proxy.set('duplicate', { pathPrefix: '/sync-api/api/batches', times: 1 });
    const b = await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'woda', quantity: 2 }]));
    await drained(box);
    proxy.set('error', { pathPrefix: '/sync-api/api/batches', times: 3 });
    const c = await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'woda', quantity: 3 }]));
    const status = await drained(box);
    proxy.set('pass');
    const at = await hqOrders(central, DEMO.openVenue);
    for (const id of [a.orderId, b.orderId, c.orderId]) expect(at.filter((o) => o.id === id)).toHaveLength(1);
    const after = (await central.hq('/hq-api/api/devices'))[0];
    expect(after.head.seq).toBe(status.newestSeq);
    expect(after.head.seq - before.head.seq).toBe(3);
    expect(proxy.seen.get('/sync-api/api/batches injected-500')).toBe(3);
  });

  test("an event that breaks the central's rules is set aside there and counted here; later events go on", async () => {
    // A box of an older version wrote an order for a venue the central does not know (added to the outbox
    // as the box would: the next seq, chained).
    const db = new Database(join(box.dataDir, 'venue-box.db'), { fileMustExist: true });
    const last = db.prepare('SELECT seq, chain_hash FROM sync_outbox ORDER BY seq DESC LIMIT 1').get() as {
      seq: number;
      chain_hash: string;
    };
    const orderId = randomUUID();
    const envelope = envelopeText(
      {
        eventId: randomUUID(),
        tenant: DEMO.tenant,
        aggregate: orderId,
        kind: 'order.changed',
        boxTime: new Date().toISOString(),
      },
      JSON.stringify({
        version: 1,
        command: {},
        order: {
          id: orderId,
          tenant: DEMO.tenant,
          status: 'NEW',
          created: new Date().toISOString(),
          buckets: [{ venue: randomUUID() }],
        },
        detail: {},
      }),
    );
    db.prepare(`INSERT INTO sync_outbox (seq, event_id, tenant_id, kind, aggregate_id, envelope, chain_hash, created_ms)
      VALUES (?, ?, ?, 'order.changed', ?, ?, ?, ?)`).run(
      last.seq + 1,
      JSON.parse(envelope).eventId,
      DEMO.tenant,
      orderId,
      envelope,
      chainHash(last.chain_hash, envelope),
      Date.now(),
    );
    db.close();
    const s = await staff(box);
    const after = await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'rosol', quantity: 1 }]));
    const status = await drained(box);
    expect(status.deadLetters).toBe(1);
    expect(status.lastError).toBeNull();
    expect((await hqOrders(central, DEMO.openVenue)).map((o) => o.id)).toContain(after.orderId);
    await expect(central.hq(`/hq-api/api/orders/${orderId}`)).rejects.toThrow(/404/);
    const device = (await central.hq('/hq-api/api/devices'))[0];
    expect(device).toMatchObject({ deadLetters: 1, head: { seq: status.newestSeq } });
  });

  test('a revoked device is refused; the box keeps its queue and keeps taking orders', async () => {
    const { deviceId } = await syncStatus(box);
    const { centralCli } = await import('./support/central.js');
    const revoked = await centralCli(['revoke', deviceId!, '--data-dir', central.dataDir]);
    expect(revoked.code).toBe(0);
    const s = await staff(box);
    await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 4 }]));
    const st = await waitFor('a refusal', async () => {
      const x = await syncStatus(box);
      return x.lastError && /401/.test(x.lastError) && x.backlog >= 1 ? x : undefined;
    });
    expect(st.backlog).toBeGreaterThanOrEqual(1);
    expect((await box.get('/ordering-api/api/order/nothing', s.token)).status).toBe(404); // still serving
  });
});
