import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, basic } from './support/box.js';
import { centralCli, startTestCentral, type TestCentral } from './support/central.js';
import { type BuiltRelease, buildRelease, prepareReleaseBox, releaseKeyPair, signRelease } from './support/releases.js';
import { STORY } from './support/story.js';
import { waitFor } from './support/sync.js';
import { runUnit, type Unit } from './support/unit.js';

// Power cuts during an update (docs/operations.md "Updating boxes" "Power cuts"): kill -9 of the box's whole unit
// (its process group, as systemd's control group) during the download, while the release waits, at the start of
// the trial, during its health gate, right after the switch and at the new release's first start. After each the
// box comes back on the old release or the new one, never on neither, and the order it had confirmed is there.
const keys = releaseKeyPair();
const pub = Buffer.from(keys.publicKey).toString('base64');

let central: TestCentral;
let base: BuiltRelease;
let next: BuiltRelease;
let opt: string;
let dataDir: string;
let config: string;
let unit: Unit;

beforeAll(async () => {
  base = buildRelease('3.0.0');
  next = buildRelease('3.1.0');
  central = await startTestCentral();
  // Only 3.1.0 at the central: no patch from 3.0.0, so the box downloads the whole binary, slowly.
  const file = `${next.binary}.release.json`;
  writeFileSync(file, JSON.stringify(await signRelease(next, keys.secretKey)));
  const r = await centralCli(['release', 'upload', file, '--data-dir', central.dataDir]);
  if (r.code !== 0) throw new Error(`release upload: ${r.stderr}`);
  const box = await prepareReleaseBox({
    name: 'update-faults',
    base,
    releaseKey: pub,
    update: { probationSeconds: 4, quietMinutes: 0, downloadBytesPerSecond: 8 * 1024 * 1024 },
    central,
  });
  ({ opt, dataDir, config } = box);
  unit = runUnit(opt, config, dataDir);
}, 600_000);

afterAll(async () => {
  await unit?.stop();
  await central?.stop();
});

const url = (path: string) => `http://127.0.0.2:${unit.port()}${path}`;
const status = (): Record<string, any> =>
  JSON.parse(
    execFileSync(join(opt, 'current', 'venue-box'), ['update', 'status', '--json', '--config', config], {
      encoding: 'utf8',
    }),
  );

async function token(username: string, password: string): Promise<string> {
  const res = await fetch(url('/auth-oauth2/oauth/token'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-tenant': DEMO.tenant, authorization: basic() },
    body: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

async function post(path: string, bearer: string, body: unknown): Promise<Response> {
  return fetch(url(path), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}`, 'x-tenant': DEMO.tenant },
    body: JSON.stringify(body),
  });
}

/** Kill -9 of the whole unit, then: it serves again, on the old release or the new one. */
async function powerCut(): Promise<void> {
  const mark = unit.logs.length;
  await unit.kill9();
  await unit.waitForLog((e) => e.msg === 'venue-box listening' && e.host === '127.0.0.2', 90_000, mark);
  expect(['3.0.0', '3.1.0']).toContain(readlinkSync(join(opt, 'current')).replace('releases/', ''));
  expect(existsSync(join(opt, 'current', 'venue-box'))).toBe(true);
}

const logged = (msg: string, after: number) => unit.waitForLog((e) => e.msg === msg, 120_000, after);

describe('power cuts during an update', STORY, () => {
  let orderId: string;
  let staff: string;
  const orderRes = async () =>
    fetch(url(`/ordering-api/api/order/${orderId}`), {
      headers: { authorization: `Bearer ${await token('kelner', 'kelner-demo-1')}`, 'x-tenant': DEMO.tenant },
    });

  test('cut during the download: it resumes from the bytes on disk', async () => {
    await unit.waitForLog((e) => e.msg === 'venue-box listening' && e.host === '127.0.0.2', 60_000);
    // An order sent to the kitchen holds the install back (an open order), so each step can be cut in turn.
    staff = await token('kelner', 'kelner-demo-1');
    const placed = await post('/ordering-api/api/order/new', staff, {
      orderType: 'TAKE_AWAY',
      buckets: [{ venue: DEMO.openVenue, lines: [{ productId: 'zurek', quantity: 1 }] }],
    });
    expect(placed.status).toBe(200);
    orderId = ((await placed.json()) as { orderId: string }).orderId;
    const submitted = await post(`/ordering-api/api/order/${orderId}/submit`, staff, {});
    expect(submitted.status).toBe(200);

    const hqToken = await central.hqToken();
    const res = await fetch(central.url('/hq-api/api/rollouts'), {
      method: 'POST',
      headers: { authorization: `Bearer ${hqToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        version: '3.1.0',
        devices: { all: true },
        window: { from: '00:00', to: '24:00' },
        stages: [100],
        stageMinutes: 0,
      }),
    });
    expect(res.status).toBe(201);
    const partial = join(opt, 'downloads');
    const size = statSync(next.binary).size;
    await waitFor(
      'a third of the download',
      () => {
        const part = existsSync(partial) ? readdirSync(partial).find((n) => n.endsWith('.part')) : undefined;
        return part !== undefined && statSync(join(partial, part)).size > size / 3;
      },
      60_000,
    );
    const mark = unit.logs.length;
    await powerCut();
    const done = await logged('update downloaded and verified', mark);
    expect(done.patched).toBe(false);
    expect(done.fetchedBytes).toBeLessThan((size * 2) / 3 + 2 * 1024 * 1024);
    expect(status()).toMatchObject({ state: 'waiting', target: '3.1.0', version: '3.0.0' });
  }, 180_000);

  test('cut while the release waits for the open order: verified again, still waiting', async () => {
    await powerCut();
    await waitFor('waiting again', () => status().state === 'waiting', 60_000);
    expect(status()).toMatchObject({ current: '3.0.0', installed: expect.arrayContaining(['3.0.0', '3.1.0']) });
  }, 120_000);

  test('cut at the start of the trial, then during its health gate: the old release each time, tried again', async () => {
    // The order is collected: nothing is open, the install begins.
    expect((await post(`/ordering-api/api/order/${orderId}/ready`, staff, {})).status).toBe(200);
    const order = await waitFor('READY', async () => {
      const o = (await (await orderRes()).json()) as { status: string; claimCode: string };
      return o.status === 'READY' ? o : undefined;
    });
    const done = await post(`/ordering-api/api/order/${orderId}/complete`, staff, { claimCode: order.claimCode });
    expect(done.status, await done.text()).toBe(200);
    let mark = unit.logs.length;
    await logged('update: the new release starts on loopback for its health gate', mark);
    await powerCut();
    expect(readlinkSync(join(opt, 'current'))).toBe('releases/3.0.0');
    mark = unit.logs.length;
    await logged('update: the new release is ready; watching it', mark);
    await powerCut();
    expect(readlinkSync(join(opt, 'current'))).toBe('releases/3.0.0');
    expect(status().detail).toMatch(/cut short/);
  }, 240_000);

  test('cut right after the switch, and at the new release first start: it comes up and confirms', async () => {
    let mark = unit.logs.length;
    await logged('update passed its health gate; current names it: restarting into it', mark);
    await unit.kill9();
    // The new release's first start after the cut: cut again as soon as it writes a line, before it confirms.
    mark = unit.logs.length;
    await unit.waitForLog(() => true, 60_000, mark);
    await powerCut();
    await waitFor('healthy on 3.1.0', () => status().state === 'healthy', 90_000);
    expect(status()).toMatchObject({ version: '3.1.0', current: '3.1.0', previous: '3.0.0', target: '3.1.0' });
    // The order confirmed before all this is there, as it was left.
    const res = await orderRes();
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe('COMPLETED');
    await waitFor(
      'the central to see it healthy',
      async () => ((await central.hq('/hq-api/api/devices')) as any[])[0]?.update?.state === 'healthy',
      30_000,
    );
  }, 240_000);
});
