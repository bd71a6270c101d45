import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GENESIS_HASH, MAX_REQUEST_BYTES, PROTOCOL } from '../src/shared/sync-protocol.js';
import { CENTRAL_DEMO, centralCli, startTestCentral, type TestCentral } from './support/central.js';
import { enrolledDevice, SimDevice } from './support/sim-device.js';

let central: TestCentral;
beforeAll(async () => {
  central = await startTestCentral();
});
afterAll(async () => {
  expect(await central.stop()).toBe(0);
});

const enrolled = (venue?: string): Promise<SimDevice> => enrolledDevice(central, venue);

const ordersOf = async (d: SimDevice) =>
  (await central.hq(`/hq-api/api/orders?deviceId=${d.deviceId}&limit=200`)).items as any[];

describe('a batch', () => {
  test('is acknowledged after commit and its orders are visible to headquarters with deviceId and version', async () => {
    const d = await enrolled();
    const first = d.order();
    const orderId = JSON.parse(first.envelope).aggregate as string;
    d.order(orderId, 2, 'CONFIRMED');
    d.order();
    const res = await d.send(1, 3);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ackedSeq: 3, ackedHash: d.events[2]!.hash, deadLetters: [] });
    const items = await ordersOf(d);
    expect(items).toHaveLength(2);
    const one = await central.hq(`/hq-api/api/orders/${orderId}`);
    expect(one).toMatchObject({ id: orderId, status: 'CONFIRMED', deviceId: d.deviceId, version: 2 });
    const versions = await central.hq(`/hq-api/api/orders/${orderId}/versions`);
    expect(versions.map((v: any) => [v.version, v.order.status])).toEqual([
      [1, 'NEW'],
      [2, 'CONFIRMED'],
    ]);
  });

  test('sent twice gets the same answer, and nothing is doubled', async () => {
    const d = await enrolled();
    for (let i = 0; i < 5; i++) d.order();
    const a = await d.send(1, 5);
    const b = await d.send(1, 5);
    expect(a.status).toBe(200);
    expect(b).toMatchObject({ status: 200, body: a.body });
    expect(await ordersOf(d)).toHaveLength(5);
  });

  test('overlapping an acknowledged one applies only the new events, once', async () => {
    const d = await enrolled();
    for (let i = 0; i < 15; i++) d.order();
    expect((await d.send(1, 10)).status).toBe(200);
    const res = await d.send(5, 15);
    expect(res).toMatchObject({ status: 200, body: { ackedSeq: 15, ackedHash: d.events[14]!.hash } });
    expect(await ordersOf(d)).toHaveLength(15);
    const tail = await d.tail(0, 1000);
    expect(tail.body.events.map((e: any) => e.seq)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(tail.body.events[10].envelope).toBe(d.events[10]!.envelope);
  });

  test('from the future is a 409 syncGap with expectedSeq, nothing applied; reordered batches then go through', async () => {
    const d = await enrolled();
    for (let i = 0; i < 6; i++) d.order();
    const early = await d.send(4, 6);
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ codes: [{ code: 'syncGap' }], expectedSeq: 1, head: { seq: 0, epoch: 0 } });
    expect(await ordersOf(d)).toHaveLength(0);
    expect((await d.send(1, 3)).status).toBe(200);
    expect((await d.send(4, 6)).body).toMatchObject({ ackedSeq: 6 });
    expect(await ordersOf(d)).toHaveLength(6);
  });

  test('that contradicts the central chain is a 409 syncDiverged with expectedSeq and head', async () => {
    const d = await enrolled();
    for (let i = 0; i < 2; i++) d.order();
    expect((await d.send(1, 2)).status).toBe(200);
    // The box was restored from an old copy: seq 2 onwards is a different history.
    d.events.splice(1);
    for (let i = 0; i < 3; i++) d.order();
    const overlap = await d.send(2, 4);
    expect(overlap).toMatchObject({
      status: 409,
      body: { codes: [{ code: 'syncDiverged' }], expectedSeq: 3, head: { seq: 2 } },
    });
    const after = await d.send(3, 4);
    expect(after).toMatchObject({ status: 409, body: { codes: [{ code: 'syncDiverged' }], expectedSeq: 3 } });
    expect(await ordersOf(d)).toHaveLength(2);
  });

  test('whose events do not hash from its prevHash to its lastHash is a 400 invalidBatch', async () => {
    const d = await enrolled();
    for (let i = 0; i < 4; i++) d.order();
    expect((await d.send(1, 2)).status).toBe(200);
    const other = await d.post(d.batch(3, 4, { header: { prevHash: 'a'.repeat(64) } }));
    expect(other).toMatchObject({ status: 400, body: { codes: [{ code: 'invalidBatch' }] } });
  });

  test('with a byte of an event changed is a 400 invalidBatch', async () => {
    const d = await enrolled();
    d.order();
    d.order();
    const envelopes = d.events.map((e) => e.envelope);
    envelopes[1] = envelopes[1]!.replace('10.00', '99.00');
    const res = await d.post(d.batch(1, 2, { envelopes }));
    expect(res).toMatchObject({ status: 400, body: { codes: [{ code: 'invalidBatch' }] } });
    expect((await d.send(1, 2)).status).toBe(200);
  });

  test('signed with another key, or by another device, is a 401', async () => {
    const d = await enrolled();
    const other = await enrolled();
    d.order();
    expect((await d.post(d.batch(1, 1, { secretKey: other.keys.secretKey }))).status).toBe(401);
    expect((await d.post(d.batch(1, 1, { header: { keyId: other.keyId } }))).status).toBe(401);
    expect((await d.post(d.batch(1, 1, { header: { deviceId: other.deviceId } }))).status).toBe(401);
    expect(
      (await d.post(d.batch(1, 1, { header: { tenant: '00000000-0000-4000-8000-000000000000' } }))).body.codes[0].code,
    ).toBe('unauthorized');
  });

  test('of a revoked device is a 401, and so are its hello and tail', async () => {
    const d = await enrolled();
    d.order();
    expect((await d.send(1, 1)).status).toBe(200);
    const revoked = await centralCli(['revoke', d.deviceId, '--data-dir', central.dataDir]);
    expect(revoked.code).toBe(0);
    d.order();
    expect((await d.send(2, 2)).status).toBe(401);
    expect((await d.hello()).status).toBe(401);
    expect((await d.tail(0)).status).toBe(401);
    expect(
      (await centralCli(['revoke', '00000000-0000-4000-8000-00000000beef', '--data-dir', central.dataDir])).code,
    ).toBe(1);
  });

  test('a hello after one that made its key known: revoked, another key, a newer protocol are refused as before', async () => {
    const d = await enrolled();
    const other = await enrolled();
    expect((await d.hello()).body.head).toEqual({ epoch: 0, seq: 0, hash: GENESIS_HASH });
    d.order();
    expect((await d.send(1, 1)).status).toBe(200);
    // The second hello takes the known key's one statement: it records the contact and answers the new head.
    const again = await d.hello({ pendingSeq: 1 });
    expect(again.body.head).toMatchObject({ epoch: 1, seq: 1, hash: d.events[0]!.hash });
    // Signed by another device's key, named as this device: a bad signature whatever the central knows.
    const forged = Object.assign(new SimDevice(d.baseUrl), { tenant: d.tenant, deviceId: d.deviceId });
    Object.assign(forged.keys, { secretKey: other.keys.secretKey });
    expect((await forged.hello()).status).toBe(401);
    expect((await d.hello({ protocol: PROTOCOL + 1 })).body.codes[0].code).toBe('unsupportedProtocol');
    expect((await centralCli(['revoke', d.deviceId, '--data-dir', central.dataDir])).code).toBe(0);
    expect((await d.hello()).body).toMatchObject({ codes: [{ code: 'unauthorized' }] });
    expect((await d.hello({ protocol: PROTOCOL + 1 })).status).toBe(401);
  });

  test('of an unknown protocol or a newer schema is a 426; nothing applied', async () => {
    const d = await enrolled();
    d.order();
    expect((await d.post(d.batch(1, 1, { header: { protocol: PROTOCOL + 1 } }))).body.codes[0].code).toBe(
      'unsupportedProtocol',
    );
    expect((await d.post(d.batch(1, 1, { header: { schema: 99 } }))).status).toBe(426);
    expect((await d.hello({ protocol: PROTOCOL + 1 })).status).toBe(426);
    expect(await ordersOf(d)).toHaveLength(0);
  });

  test('larger than MAX_REQUEST_BYTES is a 413; a malformed one a 400', async () => {
    const d = await enrolled();
    const big = await d.post(Buffer.alloc(MAX_REQUEST_BYTES + 1, 'x'));
    expect(big).toMatchObject({ status: 413, body: { codes: [{ code: 'payloadTooLarge' }] } });
    expect((await d.post(Buffer.from('not a batch'))).body.codes[0].code).toBe('invalidBatch');
    d.order();
    d.order();
    const short = await d.post(d.batch(1, 2, { envelopes: [d.events[0]!.envelope] }));
    expect(short.status).toBe(400);
  });

  test('with poison events (another tenant, unknown kind, not JSON, a foreign venue) dead-letters them and moves on', async () => {
    const d = await enrolled();
    d.order();
    d.append('order.changed', 'x', { version: 1 }, { tenant: '00000000-0000-4000-8000-000000000001' });
    d.append('menu.exploded', 'x', {});
    d.append('', '', null, { text: '{not json' });
    d.order(undefined, 1, 'NEW', new Date().toISOString(), '00000000-0000-4000-8000-0000000000aa');
    d.order();
    const res = await d.send(1, 6);
    expect(res.status).toBe(200);
    expect(res.body.ackedSeq).toBe(6);
    expect(res.body.deadLetters.map((x: any) => x.seq)).toEqual([2, 3, 4, 5]);
    expect(res.body.deadLetters[1].reason).toMatch(/unknown kind/);
    expect(await ordersOf(d)).toHaveLength(2);
    d.order();
    expect((await d.send(7, 7)).body).toEqual({ ackedSeq: 7, ackedHash: d.events[6]!.hash, deadLetters: [] });
    expect((await d.send(1, 6)).body).toEqual(res.body); // a replay reports the same dead letters
    const devices = await central.hq('/hq-api/api/devices');
    expect(devices.find((x: any) => x.id === d.deviceId)).toMatchObject({
      deadLetters: 4,
      head: { seq: 7 },
      lagEvents: 0,
    });
  });

  test('an empty event line is a dead letter, amid others or alone; the events around it are kept', async () => {
    const d = await enrolled();
    d.order();
    d.append('', '', null, { text: '' });
    d.order();
    d.append('', '', null, { text: '' });
    d.order();
    const res = await d.send(1, 5);
    expect(res.status).toBe(200);
    expect(res.body.ackedSeq).toBe(5);
    expect(res.body.deadLetters.map((x: any) => x.seq)).toEqual([2, 4]);
    expect(await ordersOf(d)).toHaveLength(3);
    d.append('', '', null, { text: '' });
    const alone = await d.send(6, 6);
    expect(alone.body).toMatchObject({ ackedSeq: 6, deadLetters: [{ seq: 6 }] });
    expect((await d.send(1, 6)).status).toBe(200);
    // Every event is kept as it came, the empty ones too.
    const tail = await d.tail(0);
    expect(tail.body.events.map((e: any) => e.envelope)).toEqual(d.events.map((e) => e.envelope));
  });

  test('from a box whose clock is a year off and then jumps back is accepted; the offset is reported', async () => {
    const d = await enrolled();
    d.clockMs = Date.now() + 365 * 86_400_000;
    expect((await d.hello()).status).toBe(200);
    d.order();
    expect((await d.send(1, 1)).status).toBe(200);
    let view = (await central.hq('/hq-api/api/devices')).find((x: any) => x.id === d.deviceId);
    expect(view.clockOffsetMs).toBeGreaterThan(364 * 86_400_000);
    d.clockMs = Date.now() - 2 * 3_600_000;
    const hello = await d.hello();
    expect(hello.body).toMatchObject({ head: { seq: 1, hash: d.events[0]!.hash }, protocols: [PROTOCOL] });
    d.order();
    expect((await d.send(2, 2)).status).toBe(200);
    view = (await central.hq('/hq-api/api/devices')).find((x: any) => x.id === d.deviceId);
    expect(view.clockOffsetMs).toBeLessThan(-7_000_000);
    expect(view.lastContactAt).not.toBeNull();
  });
});

describe('stock', () => {
  test('documents are booked once into balances, listed with their device', async () => {
    const d = await enrolled();
    const wh = CENTRAL_DEMO.warehouses[0]!;
    const doc = d.stockDocument(wh, [
      ['flour', 'kg', 2_500_000],
      ['salt', 'kg', 1_000_000],
    ]);
    d.stockDocument(wh, [['flour', 'kg', -500_000]]);
    d.stockDocument('no-such-warehouse', [['flour', 'kg', 1]]);
    const res = await d.send(1, 3);
    expect(res.body.deadLetters.map((x: any) => x.seq)).toEqual([3]);
    expect((await d.send(1, 3)).status).toBe(200);
    const stock = await central.hq(`/hq-api/api/stock?warehouseId=${wh}`);
    expect(stock.items.find((i: any) => i.id === 'flour')).toMatchObject({ qty: expect.any(Number), locked: 0 });
    const docs = await central.hq(`/hq-api/api/stock-documents?warehouseId=${wh}&limit=200`);
    const mine = docs.items.find((x: any) => x.id === JSON.parse(doc.envelope).aggregate);
    expect(mine).toMatchObject({ kind: 'PZ', deviceId: d.deviceId });
  });
});

describe('enrolment', () => {
  test('a code works once; a bad public key is a 400', async () => {
    const code = await central.enrolCode(CENTRAL_DEMO.venues[1]!);
    expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
    const bad = await new SimDevice(central.url('')).enrol(code).then(async () => {
      const d = new SimDevice(central.url(''));
      (d.keys as any).publicKey = new Uint8Array(31);
      return d.enrol(await central.enrolCode(CENTRAL_DEMO.venues[1]!));
    });
    expect(bad).toMatchObject({ status: 400, body: { codes: [{ code: 'invalidField', args: ['/publicKey'] }] } });
    const again = await new SimDevice(central.url('')).enrol(code);
    expect(again).toMatchObject({ status: 401, body: { codes: [{ code: 'unauthorized' }] } });
  });

  test('central enrol refuses an unknown tenant and a venue of no or another tenant', async () => {
    const base = ['enrol', '--data-dir', central.dataDir];
    const unknownTenant = await centralCli([
      ...base,
      '--tenant',
      '00000000-0000-4000-8000-000000000009',
      '--venue',
      CENTRAL_DEMO.venues[0]!,
    ]);
    expect(unknownTenant.code).toBe(1);
    expect(unknownTenant.stderr.trim().split('\n')).toHaveLength(1);
    expect((await centralCli([...base, '--tenant', CENTRAL_DEMO.tenant, '--venue', 'nowhere'])).code).toBe(1);
  });

  test('central devices lists every device, also as JSON', async () => {
    const d = await enrolled();
    const r = await centralCli(['devices', '--json', '--data-dir', central.dataDir]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).find((x: any) => x.id === d.deviceId)).toMatchObject({
      tenant: CENTRAL_DEMO.tenant,
      status: 'active',
      keyId: d.keyId,
    });
    const text = await centralCli(['devices', '--data-dir', central.dataDir]);
    expect(text.stdout).toContain(d.deviceId);
  });
});
