import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { centralCli, hqTokenRequest, startTestCentral, type TestCentral } from './support/central.js';
import { contractsOf } from './support/contracts.js';
import { enrolledDevice, type SimDevice } from './support/sim-device.js';

// `venue-box central dead-letters list|retry` against a real central (docs/sync.md "Dead letters"): a document
// for a warehouse the central learns only later is set aside, then replayed once, and only once.
let central: TestCentral;
beforeAll(async () => {
  central = await startTestCentral();
});
afterAll(async () => {
  expect(await central.stop()).toBe(0);
});

const deadLetters = (...args: string[]) => centralCli(['dead-letters', ...args, '--data-dir', central.dataDir]);
const listed = async (...args: string[]) => {
  const r = await deadLetters('list', '--json', ...args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { id: string; kind: string | null; retries: number; resolvedAt: string | null }[];
};
const flourIn = async (warehouse: string) =>
  (await central.hq(`/hq-api/api/stock?warehouseId=${warehouse}`)).items.find((i: { id: string }) => i.id === 'flour')
    ?.qty;
const deviceView = async (d: SimDevice) =>
  (await central.hq('/hq-api/api/devices')).find((x: { id: string }) => x.id === d.deviceId);

describe('dead letters', () => {
  test('a document for a warehouse learnt later is replayed by headquarters once; a poison event stays', async () => {
    const d = await enrolledDevice(central);
    const warehouse = randomUUID();
    d.stockDocument(warehouse, [['flour', 'kg', 2_000_000]]);
    d.append('', '', null, { text: '{not json' });
    d.order();
    const first = await d.send(1, 3);
    expect(first.body.deadLetters.map((x: { seq: number }) => x.seq)).toEqual([1, 2]);
    const doc = `${d.deviceId}:1`;
    const poison = `${d.deviceId}:2`;

    const table = await deadLetters('list', '--device', d.deviceId);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(
      new RegExp(`^${doc} .*stock\\.document .* waiting +stock document names a warehouse`, 'm'),
    );
    expect((await listed('--device', d.deviceId)).map((x) => [x.id, x.kind])).toEqual([
      [doc, 'stock.document'],
      [poison, null],
    ]);

    // Before its cause is fixed the replay is refused again: exit 1, the new attempt counted, nothing booked.
    const early = await deadLetters('retry', doc);
    expect(early.code).toBe(1);
    expect(early.stdout).toContain(`${doc} still a dead letter: stock document names a warehouse`);
    expect(early.stderr).toMatch(/^venue-box central: 1 dead letter\(s\) not replayed\n$/);
    expect((await listed('--device', d.deviceId))[0]).toMatchObject({ id: doc, retries: 1, resolvedAt: null });

    // The box creates the warehouse (a later event); now the document replays, and its ledger is booked once.
    d.append('warehouse.changed', warehouse, { id: warehouse, name: 'Nowy magazyn' });
    expect((await d.send(4, 4)).body.deadLetters).toEqual([]);
    const replay = await deadLetters('retry', doc);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toBe(`${doc} replayed\n1 replayed, 0 not\n`);
    expect(await flourIn(warehouse)).toBe(2);
    expect(await deviceView(d)).toMatchObject({ deadLetters: 1 });

    // Idempotent: the same retry, and --all, change nothing more; the poison event is still refused.
    const again = await deadLetters('retry', doc);
    expect(again).toMatchObject({ code: 0, stdout: `${doc} replayed already\n0 replayed, 0 not\n` });
    const all = await deadLetters('retry', '--all', '--device', d.deviceId);
    expect(all.code).toBe(1);
    expect(all.stdout).toBe(`${poison} still a dead letter: not JSON\n0 replayed, 1 not\n`);
    expect(await flourIn(warehouse)).toBe(2);
    expect((await listed('--device', d.deviceId)).map((x) => x.id)).toEqual([poison]);
    expect(
      (await listed('--device', d.deviceId, '--all')).map((x) => [x.id, x.retries, x.resolvedAt !== null]),
    ).toEqual([
      [doc, 2, true],
      [poison, 1, false],
    ]);
    // A batch resent (its acknowledgement lost) is told of the events still set aside only.
    expect((await d.send(1, 4)).body.deadLetters.map((x: { seq: number }) => x.seq)).toEqual([2]);
  });

  test('retry needs IDs or --all, never both; a malformed ID is a usage error, an unknown one exit 1', async () => {
    expect((await deadLetters('retry')).code).toBe(64);
    expect((await deadLetters('retry', 'not-an-id')).code).toBe(64);
    expect((await deadLetters('retry', `${randomUUID()}:1`, '--all')).code).toBe(64);
    const unknown = `${randomUUID()}:7`;
    const r = await deadLetters('retry', unknown);
    expect(r).toMatchObject({ code: 1, stdout: `${unknown} no such dead letter\n0 replayed, 1 not\n` });
    expect((await deadLetters('list', '--tenant', randomUUID())).stdout).toBe('no dead letters\n');
  });

  test("headquarters' API lists its tenant's dead letters and replays them; a read-only user may only look", async () => {
    const d = await enrolledDevice(central);
    const warehouse = randomUUID();
    d.stockDocument(warehouse, [['flour', 'kg', 500_000]]);
    expect((await d.send(1, 1)).body.deadLetters).toHaveLength(1);
    const id = `${d.deviceId}:1`;
    const writer = await central.hqToken();
    const reader = (
      (await (await hqTokenRequest(central, 'analityk', 'analityk-demo-1')).json()) as { access_token: string }
    ).access_token;
    const retry = async (token: string, body: unknown) => {
      const res = await fetch(central.url('/hq-api/api/dead-letters/retry'), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = { status: res.status, body: (await res.json()) as any };
      // Every answer is the one /openapi.json documents.
      (await contractsOf(central)).matching('post', '/hq-api/api/dead-letters/retry', answer.status, answer.body);
      return answer;
    };
    const listOf = async (query: string) => {
      const body = await central.hq(`/hq-api/api/dead-letters?${query}`);
      (await contractsOf(central)).matching('get', '/hq-api/api/dead-letters', 200, body);
      return body;
    };

    const list = await listOf(`deviceId=${d.deviceId}`);
    expect(list).toEqual([expect.objectContaining({ id, device: d.deviceId, seq: 1, kind: 'stock.document' })]);
    expect(list[0]).not.toHaveProperty('tenant');
    expect((await retry(reader, { ids: [id] })).status).toBe(403);
    for (const [body, pointer] of [
      [{}, '/ids'],
      [{ ids: [id], all: true }, '/ids'],
      [{ ids: ['nonsense'] }, '/ids/0'],
      [{ ids: [id], deviceId: d.deviceId }, '/deviceId'],
    ] as const) {
      const res = await retry(writer, body);
      expect({ body, status: res.status, codes: res.body.codes }).toMatchObject({
        status: 400,
        codes: [{ code: 'invalidField', args: [pointer] }],
      });
    }

    d.append('warehouse.changed', warehouse, { id: warehouse, name: 'Magazyn z API' });
    await d.send(2, 2);
    expect((await retry(writer, { all: true, deviceId: d.deviceId })).body).toEqual({
      outcomes: [{ id, outcome: 'replayed' }],
    });
    expect((await retry(writer, { ids: [id] })).body).toEqual({ outcomes: [{ id, outcome: 'alreadyReplayed' }] });
    expect(await flourIn(warehouse)).toBe(0.5);
    expect(await listOf(`deviceId=${d.deviceId}`)).toEqual([]);
    const kept = await listOf(`deviceId=${d.deviceId}&all=true`);
    expect(kept).toEqual([expect.objectContaining({ id, retries: 1, resolvedAt: expect.any(String) })]);
  });
});
