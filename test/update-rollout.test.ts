import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { digestOf } from '../src/shared/files.js';
import { CENTRAL_DEMO, centralCli, startTestCentral, type TestCentral } from './support/central.js';
import {
  type BuiltRelease,
  buildRelease,
  editSource,
  prepareReleaseBox,
  releaseKeyPair,
  signRelease,
} from './support/releases.js';
import { STORY } from './support/story.js';
import { waitFor } from './support/sync.js';
import { skipWithout } from './support/system-packages.js';
import { runUnit, type Unit } from './support/unit.js';

// Updates from headquarters (docs/operations.md "Updating boxes"): releases built by build.sh, signed, uploaded to a
// real central with its CLI, rolled out with the HQ API; two boxes run the single binary from release directories
// under a stand-in for their systemd unit (test/support/unit.ts), enrolled at the central.
const skip = skipWithout(import.meta.url, 'zstd');
const keys = releaseKeyPair();
const stranger = releaseKeyPair();
const pub = Buffer.from(keys.publicKey).toString('base64');

interface Box {
  name: string;
  opt: string;
  dataDir: string;
  config: string;
  unit: Unit;
}

let central: TestCentral;
let base: BuiltRelease;
let good: BuiltRelease;
let broken: BuiltRelease;
let forged: BuiltRelease;
let tampered: BuiltRelease;
let skipped: BuiltRelease;
let latest: BuiltRelease;
const boxes: Box[] = [];

async function upload(release: BuiltRelease, secretKey = keys.secretKey): Promise<void> {
  const file = `${release.binary}.release.json`;
  writeFileSync(file, JSON.stringify(await signRelease(release, secretKey)));
  // An upload makes the binary patches from every release before it (zstd over two 100 MB binaries): on a loaded
  // machine that took over the default 30 s once.
  const r = await centralCli(['release', 'upload', file, '--data-dir', central.dataDir], 180_000);
  if (r.code !== 0) throw new Error(`release upload: ${r.code} ${r.stderr}`);
}

async function hqPost(path: string, body: unknown): Promise<any> {
  const res = await fetch(central.url(path), {
    method: 'POST',
    headers: { authorization: `Bearer ${await central.hqToken()}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

const statusOf = (box: Box): Record<string, any> =>
  JSON.parse(
    execFileSync(join(box.opt, 'current', 'venue-box'), ['update', 'status', '--json', '--config', box.config], {
      encoding: 'utf8',
    }),
  );

async function startBox(name: string, venue = CENTRAL_DEMO.venues[0]!): Promise<Box> {
  const prepared = await prepareReleaseBox({
    name: `rollout-${name}`,
    base,
    releaseKey: pub,
    update: { probationSeconds: 3, quietMinutes: 0, downloadBytesPerSecond: 0 },
    central,
    venue,
  });
  const box: Box = { name, ...prepared, unit: runUnit(prepared.opt, prepared.config, prepared.dataDir) };
  boxes.push(box);
  return box;
}

const EVERY_HOUR = { from: '00:00', to: '24:00' };

/** A rollout of `version` (HQ API), every hour its window, to all boxes at once unless `over` says otherwise. */
const rollOut = (version: string, over: Record<string, unknown> = {}) =>
  hqPost('/hq-api/api/rollouts', {
    version,
    devices: { all: true },
    window: EVERY_HOUR,
    stages: [100],
    stageMinutes: 0,
    ...over,
  });

/** Waits until `count` boxes report `state` on the rollout (its counts at the HQ API). */
const reported = (id: string, state: string, count: number, ms: number) =>
  waitFor(
    `${count} box(es) ${state} on rollout ${id}`,
    async () => {
      return (await central.hq(`/hq-api/api/rollouts/${id}`)).counts[state] === count;
    },
    ms,
  );

beforeAll(async () => {
  if (skip) return;
  base = buildRelease('2.0.0');
  good = buildRelease('2.1.0');
  broken = buildRelease('2.2.0', (tree) =>
    editSource(
      tree,
      'src/main.ts',
      'async function serveVenueBox(values: CliValues): Promise<number> {',
      "async function serveVenueBox(values: CliValues): Promise<number> {\n  throw new Error('this release is broken on purpose');",
    ),
  );
  forged = buildRelease('2.3.0');
  tampered = buildRelease('2.4.0');
  skipped = buildRelease('2.5.0');
  latest = buildRelease('2.6.0');
  central = await startTestCentral();
  await upload(base);
  await upload(good);
  await upload(broken);
  await upload(forged, stranger.secretKey);
  await upload(tampered);
  await upload(skipped);
  await upload(latest);
  await startBox('a');
  await startBox('b', CENTRAL_DEMO.venues[1]!);
}, 600_000);

afterAll(async () => {
  await Promise.all(boxes.map((b) => b.unit.stop()));
  await central?.stop();
});

describe.skipIf(skip)('rollouts from headquarters', STORY, () => {
  test('every box updates itself within its window, by a patch, and reports healthy', async () => {
    await waitFor('both boxes to report 2.0.0 at the central', async () => {
      const devices = (await central.hq('/hq-api/api/devices')) as any[];
      return devices.filter((d) => d.version === '2.0.0').length === 2;
    });
    const rollout = await rollOut('2.1.0');
    await reported(rollout.id, 'healthy', 2, 120_000);
    for (const box of boxes) {
      expect(statusOf(box)).toMatchObject({ version: '2.1.0', state: 'healthy', current: '2.1.0', previous: '2.0.0' });
      // The patch against 2.0.0 gave the exact binary the manifest names.
      const downloaded = box.unit.logs
        .map((l) => JSON.parse(l.startsWith('{') ? l : '{}'))
        .find((e) => e.msg === 'update downloaded and verified');
      expect(downloaded).toMatchObject({ version: '2.1.0', patched: true });
      expect(downloaded.fetchedBytes).toBeLessThan(readFileSync(good.binary).length / 10);
      expect((await digestOf(join(box.opt, 'releases/2.1.0/venue-box'))).sha256).toBe(
        (await digestOf(good.binary)).sha256,
      );
    }
  }, 180_000);

  test('a release signed by another key is refused by every box, whatever the central says', async () => {
    const rollout = await rollOut('2.3.0');
    await reported(rollout.id, 'refused', 2, 60_000);
    for (const box of boxes)
      expect(statusOf(box)).toMatchObject({ version: '2.1.0', state: 'refused', reason: 'signature' });
  }, 120_000);

  test('bytes changed at a broken-into central are refused: nothing installed, reported', async () => {
    const facts = JSON.parse(readFileSync(join(central.dataDir, 'central-db.json'), 'utf8'));
    const db = new pg.Client(
      `postgres://${facts.user}:${encodeURIComponent(facts.password)}@127.0.0.1:${facts.port}/postgres`,
    );
    await db.connect();
    const sha = (await digestOf(tampered.binary)).sha256;
    try {
      // One byte of its binary changed where the central keeps it, and its patches gone: the boxes fetch it whole.
      await db.query(
        'UPDATE release_chunks SET data = set_byte(data, 100, (get_byte(data, 100) + 1) % 256) WHERE blob = $1 AND idx = 0',
        [sha],
      );
      await db.query('DELETE FROM release_patches WHERE to_sha256 = $1', [sha]);
    } finally {
      await db.end();
    }
    const rollout = await rollOut('2.4.0');
    await reported(rollout.id, 'refused', 2, 120_000);
    for (const box of boxes) {
      expect(statusOf(box)).toMatchObject({
        version: '2.1.0',
        state: 'refused',
        reason: 'hash',
        installed: ['2.0.0', '2.1.0'],
      });
    }
  }, 180_000);

  test('a staged rollout halts by itself when its canary rolls back; the others never get it', async () => {
    const rollout = await rollOut('2.2.0', { stages: [50, 100], haltShare: 0 });
    const view = await waitFor(
      'the rollout to halt',
      async () => {
        const r = await central.hq(`/hq-api/api/rollouts/${rollout.id}`);
        return r.state === 'halted' ? r : undefined;
      },
      150_000,
    );
    expect(view.counts.rolledBack + view.counts.refused).toBe(1);
    const states = boxes.map((b) => statusOf(b));
    expect(states.map((s) => s.version)).toEqual(['2.1.0', '2.1.0']);
    const canary = states.find((s) => s.target === '2.2.0')!;
    expect(['rolledBack', 'refused']).toContain(canary.state);
    const other = states.find((s) => s !== canary)!;
    expect(other.target).not.toBe('2.2.0');
  }, 200_000);

  test('a box offline while two releases went out gets the latest, not each in between', async () => {
    const b = boxes[1]!;
    await b.unit.stop();
    const venueB = { devices: { venues: [CENTRAL_DEMO.venues[1]!] } };
    await rollOut('2.5.0', venueB);
    const last = await rollOut('2.6.0', venueB);
    b.unit = runUnit(b.opt, b.config, b.dataDir);
    await reported(last.id, 'healthy', 1, 120_000);
    expect(statusOf(b)).toMatchObject({ version: '2.6.0', state: 'healthy', previous: '2.1.0' });
    expect(b.unit.logs.some((l) => l.includes('"2.5.0"'))).toBe(false);
    // The other box was not named: it stays where it was.
    expect(statusOf(boxes[0]!).version).toBe('2.1.0');
  }, 180_000);
});
