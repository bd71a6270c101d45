import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signedHeaders } from '../src/modules/sync/client.js';
import { type Device, loadDevice } from '../src/modules/sync/enrolment/device.js';
import { deviceSigner } from '../src/modules/sync/enrolment/signer.js';
import { type LeaseAnswer, requestStandbyLease } from '../src/modules/sync/standby-lease.js';
import { PATHS } from '../src/shared/sync-protocol.js';
import { CENTRAL_DEMO, startTestCentral, type TestCentral } from './support/central.js';
import { contractsOf } from './support/contracts.js';
import { enrol } from './support/sync.js';

// The standby lease (docs/sync.md "The standby lease"): the real central on its embedded PostgreSQL, devices
// enrolled by the box's own `sync enrol`, and the box's own client. The lease lasts LEASE_MS here, not 5 s.
const LEASE_MS = 1000;
const TIMEOUT_MS = 5000;
let central: TestCentral;
let token: string;
beforeAll(async () => {
  central = await startTestCentral({ args: ['--standby-lease-ms', String(LEASE_MS)] });
  token = await central.hqToken();
});
afterAll(() => central?.stop());

/** A device enrolled as a box enrols: a code from headquarters' API, then `venue-box sync enrol`. */
async function enrolledDevice(): Promise<Device> {
  const res = await fetch(central.url('/hq-api/api/enrol-codes'), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ venueId: CENTRAL_DEMO.venues[0] }),
  });
  expect(res.status).toBe(201);
  const { code } = (await res.json()) as { code: string };
  const dataDir = mkdtempSync(join(tmpdir(), 'vb-lease-box-'));
  await enrol({ dataDir }, central.url(''), code);
  return loadDevice(dataDir)!;
}

const lease = (device: Device, holder: string, term: number, claim: boolean) =>
  requestStandbyLease(device, { holder, term, claim }, TIMEOUT_MS);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The raw answer to a lease request, its body checked against the central's /openapi.json. */
async function post(body: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(central.url(PATHS.standbyLease), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const contracts = await contractsOf(central);
  return { status: res.status, body: contracts.response('post', PATHS.standbyLease, res.status, await res.json()) };
}
const signed = async (device: Device, body: string) =>
  signedHeaders(device, deviceSigner(device.secretKey), 'POST', PATHS.standbyLease, body);

describe('the standby lease', () => {
  test("a renewal is granted and extends the primary's lease past its first TTL", async () => {
    const device = await enrolledDevice();
    const primary = randomUUID();
    const standby = randomUUID();
    expect(await lease(device, primary, 1, false)).toEqual({
      kind: 'granted',
      term: 1,
      holder: primary,
      ttlMs: LEASE_MS,
    });
    // Renewed every LEASE_MS / 3 for two TTLs: the standby's claim is refused all along.
    for (let i = 0; i < 6; i++) {
      await sleep(LEASE_MS / 3);
      expect(await lease(device, primary, 1, false)).toMatchObject({ kind: 'granted', term: 1 });
    }
    expect(await lease(device, standby, 2, true)).toMatchObject({ kind: 'refused', term: 1, holder: primary });
  });

  test("a claim is refused while the primary's lease is live, granted once it ran out; the old primary is fenced", async () => {
    const device = await enrolledDevice();
    const primary = randomUUID();
    const standby = randomUUID();
    expect(await lease(device, primary, 3, false)).toMatchObject({ kind: 'granted' });
    const early = await lease(device, standby, 4, true);
    expect(early).toMatchObject({ kind: 'refused', term: 3, holder: primary, ttlMs: LEASE_MS });
    expect((early as { message: string }).message).toMatch(/live/);
    await sleep(LEASE_MS + 100);
    expect(await lease(device, standby, 4, true)).toEqual({
      kind: 'granted',
      term: 4,
      holder: standby,
      ttlMs: LEASE_MS,
    });
    // The old primary comes back and renews its term: 409 with the term that replaced it.
    const fenced = await lease(device, primary, 3, false);
    expect(fenced).toMatchObject({ kind: 'refused', term: 4, holder: standby });
    expect((fenced as { message: string }).message).toMatch(/fenced/);
    // Raw, the 409 is the documented refusal (the error body with the lease held now).
    const body = JSON.stringify({ holder: primary, term: 3, claim: false });
    const raw = await post(body, await signed(device, body));
    expect(raw).toMatchObject({
      status: 409,
      body: { granted: false, term: 4, holder: standby, codes: [{ code: 'conflict' }] },
    });
    // The new primary renews its own term as any primary.
    expect(await lease(device, standby, 4, false)).toMatchObject({ kind: 'granted', term: 4 });
  });

  test('a repeated claim is idempotent: granted again, its lease extended', async () => {
    const device = await enrolledDevice();
    const standby = randomUUID();
    expect(await lease(device, standby, 1, true)).toMatchObject({ kind: 'granted', term: 1 });
    await sleep(LEASE_MS / 2);
    expect(await lease(device, standby, 1, true)).toMatchObject({ kind: 'granted', term: 1, holder: standby });
    // Extended by the repeat: still live past the first grant's TTL, so another claim of the next term waits.
    await sleep(LEASE_MS / 2 + 100);
    expect(await lease(device, randomUUID(), 2, true)).toMatchObject({ kind: 'refused', term: 1, holder: standby });
    // A claim of the same term by another box is refused even after the lease ran out: the term is taken.
    await sleep(LEASE_MS);
    expect(await lease(device, randomUUID(), 1, true)).toMatchObject({ kind: 'refused', term: 1, holder: standby });
  });

  test('claims racing for one term: exactly one wins, the others learn who', async () => {
    const device = await enrolledDevice();
    const primary = randomUUID();
    expect(await lease(device, primary, 7, false)).toMatchObject({ kind: 'granted' });
    await sleep(LEASE_MS + 100);
    const racers = Array.from({ length: 8 }, () => randomUUID());
    const answers: LeaseAnswer[] = await Promise.all(racers.map((holder) => lease(device, holder, 8, true)));
    const winners = answers.filter((a) => a.kind === 'granted');
    expect(winners).toHaveLength(1);
    const winner = (winners[0] as { holder: string }).holder;
    for (const a of answers.filter((x) => x.kind !== 'granted'))
      expect(a).toMatchObject({ kind: 'refused', term: 8, holder: winner });
    // A renewal racing the claims of the next term: either the renewal or one claim, never both.
    await sleep(LEASE_MS + 100);
    const [renewal, ...claims] = await Promise.all([
      lease(device, winner, 8, false),
      ...racers.slice(0, 4).map((holder) => lease(device, holder, 9, true)),
    ]);
    const granted = claims.filter((a) => a.kind === 'granted').length;
    expect(granted).toBeLessThanOrEqual(1);
    // Renewed after a claim: fenced. Claimed after a renewal: refused (live). Exactly one of them holds.
    expect(granted + (renewal!.kind === 'granted' ? 1 : 0)).toBe(1);
  });

  test('a body outside the schema is 400 invalidField naming the field; one that is not JSON 400 too', async () => {
    const device = await enrolledDevice();
    const holder = randomUUID();
    for (const [body, field] of [
      [{ holder, term: -1, claim: false }, '/term'],
      [{ holder, term: 1.5, claim: false }, '/term'],
      [{ holder, term: '1', claim: false }, '/term'],
      [{ holder, term: 2 ** 53, claim: false }, '/term'],
      [{ holder: 'not-a-box-id', term: 1, claim: false }, '/holder'],
      [{ term: 1, claim: false }, '/holder'],
      [{ holder, term: 1 }, '/claim'],
      [{ holder, term: 1, claim: 'yes' }, '/claim'],
    ] as const) {
      const text = JSON.stringify(body);
      const res = await post(text, await signed(device, text));
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.codes).toContainEqual(expect.objectContaining({ code: 'invalidField', args: [field] }));
    }
    for (const text of ['{', '[]', '']) {
      const res = await post(text, await signed(device, text));
      expect({ text, status: res.status }).toEqual({ text, status: 400 });
    }
  });

  test('unsigned, wrongly signed or revoked: 401, nothing granted', async () => {
    const device = await enrolledDevice();
    const holder = randomUUID();
    const body = JSON.stringify({ holder, term: 1, claim: true });
    const headers = await signed(device, body);
    expect((await post(body, {})).status).toBe(401);
    // Another key, the signature of another body, another device's name on this device's signature.
    const stranger = { ...device, secretKey: nacl.sign.keyPair().secretKey };
    expect((await post(body, await signed(stranger, body))).status).toBe(401);
    expect((await post(body, { ...headers, 'x-signature': (await signed(device, '{}'))['x-signature'] })).status).toBe(
      401,
    );
    expect((await post(body, { ...headers, 'x-device': randomUUID() })).status).toBe(401);
    // Nothing was stored by those: the signed claim is the first, and granted.
    expect(await lease(device, holder, 1, true)).toMatchObject({ kind: 'granted', term: 1 });

    const revoke = await fetch(central.url(`/hq-api/api/devices/${device.deviceId}/revoke`), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(revoke.status).toBe(200);
    const refused = await lease(device, holder, 1, false);
    expect(refused).toMatchObject({ kind: 'refused', term: null, holder: null, ttlMs: null });
    expect((refused as { message: string }).message).toMatch(/does not know this device or revoked it/);
  });

  test('a central that cannot be reached, or does not answer in time, is unreachable: never a grant', async () => {
    const device = await enrolledDevice();
    const gone = { ...device, central: 'http://127.0.0.1:1' };
    expect(await lease(gone, randomUUID(), 1, false)).toMatchObject({ kind: 'unreachable' });
    // A listener that never answers: the timeout ends the request.
    const { createServer } = await import('node:net');
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as { port: number }).port;
      const slow = { ...device, central: `http://127.0.0.1:${port}` };
      const started = Date.now();
      expect(await requestStandbyLease(slow, { holder: randomUUID(), term: 1, claim: false }, 300)).toEqual({
        kind: 'unreachable',
        reason: 'central unreachable (timeout)',
      });
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      silent.close();
    }
  });
});
