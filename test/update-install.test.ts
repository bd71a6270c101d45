import { execFileSync } from 'node:child_process';
import { existsSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, basic } from './support/box.js';
import { signRotation } from '../src/shared/release.js';
import type { KeyRotation } from '../src/shared/release-schemas.js';
import {
  type BuiltRelease,
  buildRelease,
  editSource,
  prepareReleaseBox,
  releaseKeyPair,
  signRelease,
} from './support/releases.js';
import { STORY } from './support/story.js';
import { runUnit, type Unit } from './support/unit.js';

// Installs with a way back (docs/operations.md "Updating boxes"), from releases on a stick (`update apply`): the box
// runs from a release directory under a stand-in for its systemd unit (test/support/unit.ts); each release is
// built by build.sh from this checkout with another version, some broken on purpose.
const keys = releaseKeyPair();
const pub = Buffer.from(keys.publicKey).toString('base64');

let base: BuiltRelease;
let good: BuiltRelease;
let exitsAtStart: BuiltRelease;
let stallsAfterReady: BuiltRelease;
let migratesThenStalls: BuiltRelease;
let rotated: BuiltRelease;
let byOldKey: BuiltRelease;
let optDir: string;
let dataDir: string;
let configFile: string;
let unit: Unit;

/** Blocks the event loop two seconds after the box is ready: it serves, then stops answering (no watchdog). */
const STALL = `const box = await startBox({ config, log, provisioning, configFile: values.config, systemd, trial, tookOver });
  setTimeout(() => { const until = Date.now() + 600_000; while (Date.now() < until) {} }, 2000).unref();`;

beforeAll(async () => {
  base = buildRelease('1.0.0');
  good = buildRelease('1.1.0');
  exitsAtStart = buildRelease('1.2.0', (tree) =>
    editSource(
      tree,
      'src/main.ts',
      'async function serveVenueBox(values: CliValues): Promise<number> {',
      "async function serveVenueBox(values: CliValues): Promise<number> {\n  throw new Error('this release is broken on purpose');",
    ),
  );
  stallsAfterReady = buildRelease('1.3.0', (tree) =>
    editSource(
      tree,
      'src/main.ts',
      'const box = await startBox({ config, log, provisioning, configFile: values.config, systemd, trial, tookOver });',
      STALL,
    ),
  );
  migratesThenStalls = buildRelease('1.4.0', (tree) => {
    editSource(
      tree,
      'src/db/migrate.ts',
      '  migration0013,\n];',
      "  migration0013,\n  { version: 14, name: 'update-test', up: 'CREATE TABLE update_test (x INTEGER) STRICT;' },\n];",
    );
    editSource(
      tree,
      'src/main.ts',
      'const box = await startBox({ config, log, provisioning, configFile: values.config, systemd, trial, tookOver });',
      STALL,
    );
  });
  rotated = buildRelease('1.5.0');
  byOldKey = buildRelease('1.6.0');
  const box = await prepareReleaseBox({
    name: 'update',
    base,
    releaseKey: pub,
    update: { readySeconds: 60, probationSeconds: 4, quietMinutes: 0 },
  });
  ({ opt: optDir, dataDir, config: configFile } = box);
  unit = runUnit(optDir, configFile, dataDir);
}, 600_000);

afterAll(async () => {
  await unit?.stop();
});

const url = (path: string) => `http://127.0.0.2:${unit.port()}${path}`;

async function listening(version: string, after: number): Promise<void> {
  await unit.waitForLog((e) => e.msg === 'venue-box listening' && e.host === '127.0.0.2', 90_000, after);
  await expect.poll(async () => (await updateStatus()).version, { timeout: 30_000 }).toBe(version);
}

/** `update status --json` of the release `current` names. */
async function updateStatus(): Promise<Record<string, any>> {
  const out = execFileSync(
    join(optDir, 'current', 'venue-box'),
    ['update', 'status', '--json', '--config', configFile],
    {
      encoding: 'utf8',
    },
  );
  return JSON.parse(out) as Record<string, any>;
}

async function placeOrder(): Promise<string> {
  const tokenRes = await fetch(url('/auth-oauth2/oauth/token'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-tenant': DEMO.tenant, authorization: basic() },
    body: new URLSearchParams({ grant_type: 'password', username: 'anonymous', password: '' }).toString(),
  });
  const { access_token: token } = (await tokenRes.json()) as { access_token: string };
  const res = await fetch(url('/ordering-api/api/order/new'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-tenant': DEMO.tenant },
    body: JSON.stringify({ orderType: 'TAKE_AWAY', buckets: [{ venue: DEMO.openVenue }] }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { orderId: string }).orderId;
}

/** Puts a release on the box as from a stick; signed once, so applying it again offers the same signed release. */
async function apply(release: BuiltRelease, secretKey = keys.secretKey, rotations: KeyRotation[] = []): Promise<void> {
  const file = `${release.binary}.release.json`;
  if (!existsSync(file)) writeFileSync(file, JSON.stringify(await signRelease(release, secretKey, {}, rotations)));
  execFileSync(join(optDir, 'current', 'venue-box'), ['update', 'apply', file, '--config', configFile], {
    stdio: 'pipe',
  });
}

describe('installing releases from a stick', STORY, () => {
  let before: string;

  test('a good release is checked, installed through its health gate and serves; orders stay', async () => {
    await listening('1.0.0', 0);
    expect(readlinkSync(join(optDir, 'current'))).toBe('releases/1.0.0');
    before = await placeOrder();
    const mark = unit.logs.length;
    await apply(good);
    await listening('1.1.0', mark);
    await expect.poll(async () => (await updateStatus()).state, { timeout: 30_000 }).toBe('healthy');
    expect(await updateStatus()).toMatchObject({
      current: '1.1.0',
      previous: '1.0.0',
      target: '1.1.0',
      installing: null,
    });
    expect(existsSync(join(optDir, 'releases/1.0.0/venue-box'))).toBe(true);
    expect((await orderOf(before)).status).toBe(200);
  }, 180_000);

  test('a release that exits at start is rolled back, with the reason', async () => {
    const mark = unit.logs.length;
    await apply(exitsAtStart);
    await unit.waitForLog((e) => e.msg === 'update rolled back', 120_000, mark);
    await listening('1.1.0', mark);
    expect(await updateStatus()).toMatchObject({
      state: 'rolledBack',
      target: '1.2.0',
      reason: 'exited',
      current: '1.1.0',
    });
    expect((await updateStatus()).detail).toMatch(/broken on purpose/);
  }, 180_000);

  test('a release that serves, then stops answering, fails its health gate', async () => {
    const mark = unit.logs.length;
    await apply(stallsAfterReady);
    await unit.waitForLog((e) => e.msg === 'update rolled back', 120_000, mark);
    await listening('1.1.0', mark);
    expect(await updateStatus()).toMatchObject({
      state: 'rolledBack',
      target: '1.3.0',
      reason: 'gate',
      current: '1.1.0',
    });
  }, 180_000);

  test('one that migrates the database and fails: the backup is restored, the old release opens it', async () => {
    const mark = unit.logs.length;
    await apply(migratesThenStalls);
    await unit.waitForLog((e) => e.msg === 'update rolled back', 120_000, mark);
    await listening('1.1.0', mark);
    expect(await updateStatus()).toMatchObject({
      state: 'rolledBack',
      target: '1.4.0',
      reason: 'gate',
      current: '1.1.0',
    });
    expect((await orderOf(before)).status).toBe(200);
    // The same signed release is never tried again by itself (signed anew, it would be).
    const again = unit.logs.length;
    await apply(migratesThenStalls);
    await new Promise((r) => setTimeout(r, 3000));
    expect(unit.logs.slice(again).some((l) => l.includes('installing an update'))).toBe(false);
  }, 180_000);

  test('a release signed by a rotated key is trusted through its rotation; the old key is then retired', async () => {
    const next = releaseKeyPair();
    const rotation = signRotation(keys.secretKey, Buffer.from(next.publicKey).toString('base64'));
    const mark = unit.logs.length;
    await apply(rotated, next.secretKey, [rotation]);
    await listening('1.5.0', mark);
    await expect.poll(async () => (await updateStatus()).state, { timeout: 30_000 }).toBe('healthy');
    expect((await updateStatus()).releaseKeys).toEqual([Buffer.from(next.publicKey).toString('base64')]);
    writeFileSync(`${byOldKey.binary}.release.json`, JSON.stringify(await signRelease(byOldKey, keys.secretKey)));
    expect(() =>
      execFileSync(
        join(optDir, 'current', 'venue-box'),
        ['update', 'apply', `${byOldKey.binary}.release.json`, '--config', configFile],
        { stdio: 'pipe' },
      ),
    ).toThrow(/not trust|signature/);
  }, 180_000);
});

async function orderOf(id: string): Promise<Response> {
  return fetch(url(`/ordering-api/api/order/${id}`), {
    headers: { authorization: `Bearer ${await staffToken()}`, 'x-tenant': DEMO.tenant },
  });
}

async function staffToken(): Promise<string> {
  const res = await fetch(url('/auth-oauth2/oauth/token'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-tenant': DEMO.tenant, authorization: basic() },
    body: new URLSearchParams({ grant_type: 'password', username: 'kelner', password: 'kelner-demo-1' }).toString(),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}
