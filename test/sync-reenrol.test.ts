import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import nacl from 'tweetnacl';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { reenrolProofText } from '../src/shared/reenrol-proof.js';
import { signDetached } from '../src/shared/sync-protocol.js';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { centralCli, startTestCentral, type TestCentral } from './support/central.js';
import { command, newOrder } from './support/orders.js';
import { drained, enrol, FAST_SYNC, syncCli, syncStatus, waitFor } from './support/sync.js';
import { STORY } from './support/story.js';
import { staff } from './warehouse-client.js';

// Revoke and enrol again (docs/sync.md "Enrolling again"): the running box goes on under its new identity
// without a restart, and headquarters gets every change, old orders' included, with no dead letter.
let central: TestCentral;
let box: TestBox;
let db: pg.Client;

// A refused device waits retryMaxMs (here two minutes): only noticing the new device file ends that wait early.
const CONFIG = { sync: { ...FAST_SYNC.sync, retryMaxMs: 120_000, enrolPollSeconds: 0.2 } };

beforeAll(async () => {
  central = await startTestCentral();
  box = await startTestBox({ config: CONFIG });
  db = new pg.Client({ connectionString: central.databaseUrl });
  await db.connect();
}, 60_000);
afterAll(async () => {
  await db?.end();
  await box?.stop();
  await central?.stop();
});

interface StoredDevice {
  deviceId: string;
  tenant: string;
  venue: string;
  keyId: string;
  secretKey: string;
}
const deviceFile = (): StoredDevice => JSON.parse(readFileSync(join(box.dataDir, 'sync-device.json'), 'utf8'));

const deadLetters = async (): Promise<number> =>
  Number((await db.query('SELECT count(*) AS n FROM sync_dead_letters')).rows[0].n);

const hqOrder = (id: string): Promise<{ status: string; version: number }> => central.hq(`/hq-api/api/orders/${id}`);

/** A raw enrolment request to the central, as a hostile box could send it. */
async function enrolRaw(body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(central.url('/sync-api/api/enrol'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const newPublicKey = (): string => Buffer.from(nacl.sign.keyPair().publicKey).toString('base64');

const proofBy = (secretKey: string, tenant: string, deviceId: string, publicKey: string): string =>
  Buffer.from(
    signDetached(Buffer.from(reenrolProofText(tenant, deviceId, publicKey), 'utf8'), Buffer.from(secretKey, 'base64')),
  ).toString('base64');

describe('a box revoked and enrolled again while it runs', STORY, () => {
  let first: StoredDevice;
  const orders: string[] = [];

  test('the new device carries the history: old orders change at headquarters, nothing is dead-lettered', async () => {
    await enrol(box, central.url(''), await central.enrolCode(DEMO.openVenue));
    first = deviceFile();
    const s = await staff(box);
    for (let i = 0; i < 4; i++)
      orders.push(
        (await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: i + 1 }])))
          .orderId,
      );
    for (const id of orders) await command(box, s.token, `${id}/submit`, {});
    await drained(box);
    expect((await hqOrder(orders[0]!)).status).toBe('ORDERED');

    // Headquarters revokes the box; it keeps taking orders and changing the old ones, refused by the central.
    const revoked = await centralCli(['revoke', first.deviceId, '--data-dir', central.dataDir]);
    expect(revoked.code, revoked.stderr).toBe(0);
    for (const id of orders.slice(0, 2)) await command(box, s.token, `${id}/ready`, {});
    orders.push(
      (await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 9 }]))).orderId,
    );
    await waitFor('the refusal', async () => /401/.test((await syncStatus(box)).lastError ?? ''));

    // Enrolled again with a new code, the box still running: a second enrol without --again is still refused.
    const code = await central.enrolCode(DEMO.openVenue);
    const plain = await syncCli(['enrol', '--data-dir', box.dataDir, '--central', central.url(''), '--code', code]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/enrolled already.*--again/);
    const again = await syncCli([
      'enrol',
      '--again',
      '--data-dir',
      box.dataDir,
      '--central',
      central.url(''),
      '--code',
      code,
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`following device ${first.deviceId}`);
    const second = deviceFile();
    expect(second.deviceId).not.toBe(first.deviceId);
    expect(second.keyId).not.toBe(first.keyId);

    // No restart: the running box drains under its new identity within seconds, not after its refusal wait.
    const status = await drained(box, 20_000);
    expect(status.deviceId).toBe(second.deviceId);
    expect(status.deadLetters).toBe(0);
    // One more change of an old order after the re-enrolment goes through too.
    await command(box, s.token, `${orders[2]}/ready`, {});
    const end = await drained(box, 20_000);

    expect(await deadLetters()).toBe(0);
    for (const id of orders.slice(0, 3)) expect((await hqOrder(id)).status).toBe('READY');
    expect((await hqOrder(orders[3]!)).status).toBe('ORDERED');
    expect((await hqOrder(orders[4]!)).status).toBe('NEW');

    // The new device took the old one's stream where it was: one chain, each event stored once.
    const devices = (await central.hq('/hq-api/api/devices')) as {
      id: string;
      status: string;
      head: { seq: number };
    }[];
    const byId = new Map(devices.map((d) => [d.id, d]));
    expect(byId.get(first.deviceId)?.status).toBe('revoked');
    expect(byId.get(second.deviceId)).toMatchObject({ status: 'active', head: { seq: end.newestSeq } });
    const stored = await db.query<{ seq: string; n: string }>(
      'SELECT seq, count(*) AS n FROM sync_events WHERE device_id = ANY($1) GROUP BY seq HAVING count(*) > 1',
      [[first.deviceId, second.deviceId]],
    );
    expect(stored.rows).toEqual([]);
    const { rows } = await db.query<{ n: string }>(
      'SELECT count(DISTINCT seq) AS n FROM sync_events WHERE device_id = ANY($1)',
      [[first.deviceId, second.deviceId]],
    );
    expect(Number(rows[0]!.n)).toBe(end.newestSeq);
  }, 120_000);

  test('a history is taken over once, by its own key, for its own venue; a refused proof leaves the code usable', async () => {
    const second = deviceFile();
    const code = await central.enrolCode(DEMO.openVenue);
    // The old key again: the history went to the second device already.
    let key = newPublicKey();
    let r = await enrolRaw({
      code,
      publicKey: key,
      previous: { deviceId: first.deviceId, signature: proofBy(first.secretKey, first.tenant, first.deviceId, key) },
    });
    expect(r.status).toBe(409);
    expect(r.body.codes[0].code).toBe('conflict');
    // A proof by another key than the device's: the hostile box does not hold the second device's key.
    key = newPublicKey();
    r = await enrolRaw({
      code,
      publicKey: key,
      previous: { deviceId: second.deviceId, signature: proofBy(first.secretKey, first.tenant, second.deviceId, key) },
    });
    expect(r.status).toBe(401);
    // A real proof, but bound to another public key than the one enrolled.
    r = await enrolRaw({
      code,
      publicKey: newPublicKey(),
      previous: {
        deviceId: second.deviceId,
        signature: proofBy(second.secretKey, second.tenant, second.deviceId, key),
      },
    });
    expect(r.status).toBe(401);
    // A code for another venue: refused, whatever the proof.
    const otherVenue = DEMO.venues.find((v) => v.id !== DEMO.openVenue)!.id;
    key = newPublicKey();
    r = await enrolRaw({
      code: await central.enrolCode(otherVenue),
      publicKey: key,
      previous: {
        deviceId: second.deviceId,
        signature: proofBy(second.secretKey, second.tenant, second.deviceId, key),
      },
    });
    expect(r.status).toBe(403);
    expect(r.body.codes[0].code).toBe('forbidden');
    // Nothing was spent or changed: the code enrols a plain new device, and the second device still syncs.
    r = await enrolRaw({ code, publicKey: newPublicKey() });
    expect(r.status).toBe(201);
    const s = await staff(box);
    await command(box, s.token, `${orders[3]}/ready`, {});
    await drained(box, 20_000);
    expect((await hqOrder(orders[3]!)).status).toBe('READY');
    expect(await deadLetters()).toBe(0);
  }, 60_000);
});
