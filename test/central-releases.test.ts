import { createHash, randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signManifest, stableBucket } from '../src/shared/release.js';
import {
  type Arch,
  RELEASE_PATHS,
  type ReleaseManifest,
  type SignedRelease,
  type UpdateReport,
} from '../src/shared/release-schemas.js';
import { CENTRAL_DEMO, centralCli, startTestCentral, type TestCentral } from './support/central.js';
import { expectApiError, TENANT_B, writeTenantB } from './support/fixtures.js';
import { enrolledDevice, SimDevice } from './support/sim-device.js';
import { STORY } from './support/story.js';
import { skipWithout } from './support/system-packages.js';

// Signed updates of the boxes' program, the central's half (docs/sync.md "Releases and rollouts"): one real central
// (embedded PostgreSQL); releases are a few MB of random bytes signed with a key made here, never a real binary.
// Each test uses versions of its own; the rollout story's devices are the only ones at the demo's second and third
// venues, so the other tests' devices (at the first) never change what it counts.
const MiB = 1024 * 1024;
const TENANT = CENTRAL_DEMO.tenant;
const releaseKey = nacl.sign.keyPair();
let central: TestCentral;
let token: string;

beforeAll(async () => {
  central = await startTestCentral();
  token = await central.hqToken();
}, 60_000);
afterAll(() => central?.stop());

interface Release {
  signed: SignedRelease;
  manifest: ReleaseManifest;
  bytes: Buffer;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function makeRelease(version: string, bytes: Buffer, arch: Arch = 'x64', over: Partial<ReleaseManifest> = {}): Release {
  const manifest: ReleaseManifest = {
    format: 1,
    version,
    arch,
    sha256: sha256(bytes),
    size: bytes.length,
    node: '24.21.0',
    schema: { box: 1 },
    notes: `release ${version}`,
    createdAt: new Date().toISOString(),
    rollback: false,
    ...over,
  };
  return { signed: signManifest(manifest, releaseKey.secretKey, []), manifest, bytes };
}

/** A call to the HQ API as centrala (scope read write); JSON bodies as JSON, Buffers as bytes. */
function hq(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const binary = Buffer.isBuffer(body);
  return fetch(central.url(`/hq-api/api${path}`), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': binary ? 'application/octet-stream' : 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : binary ? (body as Buffer) : JSON.stringify(body),
  });
}

const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();

const put = (r: Release, start: number, piece: Buffer) =>
  hq('PUT', `/releases/${r.manifest.version}/${r.manifest.arch}/binary`, piece, {
    'content-range': `bytes ${start}-${start + piece.length - 1}/${r.bytes.length}`,
  });

/** Registers and uploads a release in pieces of `pieceBytes`; its state at the end. */
async function upload(r: Release, pieceBytes = 4 * MiB): Promise<{ state: string; received: number }> {
  const created = await hq('POST', '/releases', r.signed);
  expect(created.status, await created.clone().text()).toBe(201);
  let last: { state: string; received: number } = await json(created);
  for (let start = 0; start < r.bytes.length; start += pieceBytes) {
    const res = await put(r, start, r.bytes.subarray(start, start + pieceBytes));
    expect(res.status, await res.clone().text()).toBe(200);
    last = await json(res);
  }
  return last;
}

/** A PUT whose connection is cut halfway through its body: the central never sees the piece whole. */
function interruptedPut(r: Release, start: number, piece: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const req = request(central.url(`/hq-api/api/releases/${r.manifest.version}/${r.manifest.arch}/binary`), {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/octet-stream',
        'content-length': String(piece.length),
        'content-range': `bytes ${start}-${start + piece.length - 1}/${r.bytes.length}`,
      },
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(piece.subarray(0, piece.length >> 1), () => setTimeout(() => req.destroy(), 100));
  });
}

const report = (over: Partial<UpdateReport>): UpdateReport => ({
  version: '5.9.0',
  arch: 'x64',
  node: '24.21.0',
  state: 'idle',
  since: Date.now(),
  ...over,
});

describe('uploads', () => {
  test('through the API in pieces, resumed after an interrupted piece; the bytes download as uploaded', async () => {
    const r = makeRelease('2.0.0', randomBytes(5 * MiB + 12_345));
    const created = await hq('POST', '/releases', r.signed);
    expect(created.status).toBe(201);
    expect(await json(created)).toMatchObject({
      id: '2.0.0/x64',
      state: 'uploading',
      received: 0,
      size: r.bytes.length,
    });
    // The same file again: idempotent.
    const again = await hq('POST', '/releases', r.signed);
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ id: '2.0.0/x64', received: 0 });

    // Pieces that do not end on a chunk's edge: the next one completes the chunk.
    const piece = 1_500_000;
    expect(await json(put(r, 0, r.bytes.subarray(0, piece)))).toMatchObject({ received: piece });
    await interruptedPut(r, piece, r.bytes.subarray(piece, 2 * piece));
    const now = await json(hq('GET', '/releases/2.0.0/x64'));
    expect(now).toMatchObject({ state: 'uploading', received: piece });
    // A client that believes the piece went through is told where to resume.
    const ahead = await put(r, 2 * piece, r.bytes.subarray(2 * piece, 3 * piece));
    expect(ahead.headers.get('upload-offset')).toBe(String(piece));
    await expectApiError(ahead, 409, 'conflict', [String(piece)]);
    let state = '';
    for (let start = piece; start < r.bytes.length; start += 3 * MiB) {
      const res = await put(r, start, r.bytes.subarray(start, start + 3 * MiB));
      expect(res.status).toBe(200);
      state = (await json(res)).state;
    }
    expect(state).toBe('ready');
    // A piece sent again after the end: the release as it is.
    expect(await json(put(r, 0, r.bytes.subarray(0, 10)))).toMatchObject({ state: 'ready' });

    const device = await enrolledDevice(central);
    const whole: Buffer[] = [];
    for (let start = 0; start < r.bytes.length; start += 8 * MiB) {
      const res = await device.download(RELEASE_PATHS.binary(r.manifest.sha256), {
        range: `bytes=${start}-${start + 8 * MiB - 1}`,
      });
      expect(res.status).toBe(206);
      whole.push(res.bytes);
    }
    expect(sha256(Buffer.concat(whole))).toBe(r.manifest.sha256);
  });

  test("bytes that are not the manifest's are refused at the last byte, and nothing is kept", async () => {
    const r = makeRelease('2.1.0', randomBytes(2 * MiB));
    const wrong = { ...r, bytes: randomBytes(2 * MiB) };
    await hq('POST', '/releases', r.signed);
    expect((await put(wrong, 0, wrong.bytes.subarray(0, MiB))).status).toBe(200);
    const body = await expectApiError(await put(wrong, MiB, wrong.bytes.subarray(MiB)), 422, 'releaseMismatch');
    expect(body.message).toMatch(/discarded/);
    await expectApiError(await hq('GET', '/releases/2.1.0/x64'), 404, 'notFound');
    const list = (await json(hq('GET', '/releases'))) as { id: string }[];
    expect(list.map((x) => x.id)).not.toContain('2.1.0/x64');
    // Registered again, the right bytes go in.
    expect((await upload(r)).state).toBe('ready');
    // The same version and arch with other bytes: a conflict.
    await expectApiError(await hq('POST', '/releases', makeRelease('2.1.0', randomBytes(100)).signed), 409, 'conflict');
  });

  test('a bad release file or piece is refused 4xx, and nothing is written', async () => {
    const r = makeRelease('2.2.0', randomBytes(1000));
    const tampered = { ...r.signed, manifest: r.signed.manifest.replace('"2.2.0"', '"2.2.1"') };
    await expectApiError(await hq('POST', '/releases', tampered), 400, 'invalidField', ['/signature']);
    const otherKey = makeRelease('2.2.0', r.bytes);
    const forged = {
      ...r.signed,
      signature: signManifest(otherKey.manifest, nacl.sign.keyPair().secretKey, []).signature,
    };
    await expectApiError(await hq('POST', '/releases', forged), 400, 'invalidField', ['/signature']);
    await expectApiError(await hq('POST', '/releases', { ...r.signed, manifest: '{' }), 400, 'invalidField', [
      '/manifest',
    ]);
    const partial = await json(hq('POST', '/releases', { manifest: r.signed.manifest }));
    expect(partial.codes.map((c: { args: string[] }) => c.args[0])).toEqual(['/publicKey', '/signature', '/keys']);
    await expectApiError(await hq('GET', '/releases/2.2.0/x64'), 404, 'notFound');

    expect((await hq('POST', '/releases', r.signed)).status).toBe(201);
    await expectApiError(
      await hq('PUT', '/releases/2.2.0/x64/binary', r.bytes, { 'content-range': 'bytes 0-999/*' }),
      400,
      'invalidField',
      ['Content-Range'],
    );
    await expectApiError(
      await hq('PUT', '/releases/2.2.0/x64/binary', r.bytes, { 'content-range': 'bytes 0-999/2000' }),
      400,
      'invalidField',
      ['Content-Range'],
    );
    await expectApiError(
      await hq('PUT', '/releases/2.2.0/x64/binary', r.bytes.subarray(0, 10), { 'content-range': 'bytes 0-999/1000' }),
      400,
      'invalidField',
      ['Content-Range'],
    );
    await expectApiError(
      await hq('PUT', '/releases/9.9.9/x64/binary', r.bytes, { 'content-range': 'bytes 0-999/1000' }),
      404,
      'notFound',
    );
    await expectApiError(await hq('PUT', '/releases/2.2.0/sparc/binary', r.bytes), 400, 'invalidField', ['arch']);
    expect(await json(hq('GET', '/releases/2.2.0/x64'))).toMatchObject({ received: 0, state: 'uploading' });
  });

  test('the same bytes signed anew by their key are kept; by another key, even with a forged rotation, 409', async () => {
    const r = makeRelease('3.7.11', randomBytes(2000));
    await upload(r);
    const asRollback = makeRelease('3.7.11', r.bytes, 'x64', { rollback: true, notes: 'rollback' });
    expect((await hq('POST', '/releases', asRollback.signed)).status).toBe(200);
    const stranger = nacl.sign.keyPair();
    const hijack = signManifest({ ...r.manifest, notes: 'hijacked' }, stranger.secretKey, [
      {
        publicKey: Buffer.from(stranger.publicKey).toString('base64'),
        signedBy: r.signed.publicKey,
        signature: Buffer.alloc(64).toString('base64'),
      },
    ]);
    await expectApiError(await hq('POST', '/releases', hijack), 409, 'conflict', []);
    const kept = (await (await hq('GET', '/releases/3.7.11/x64')).json()) as { manifest: unknown };
    expect(kept.manifest).toMatchObject({ rollback: true, notes: 'rollback' });
  });

  test('two pieces racing for the same place: one is stored, the other told where to resume', async () => {
    const r = makeRelease('2.3.0', randomBytes(2 * MiB));
    expect((await hq('POST', '/releases', r.signed)).status).toBe(201);
    const piece = r.bytes.subarray(0, MiB + 1);
    const answers = await Promise.all([put(r, 0, piece), put(r, 0, piece)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(await json(hq('GET', '/releases/2.3.0/x64'))).toMatchObject({ received: MiB + 1 });
    expect(await json(put(r, MiB + 1, r.bytes.subarray(MiB + 1)))).toMatchObject({ state: 'ready' });
    // More than one request may carry: 413, nothing written.
    const big = makeRelease('2.3.1', randomBytes(5 * MiB));
    expect((await hq('POST', '/releases', big.signed)).status).toBe(201);
    await expectApiError(await put(big, 0, big.bytes.subarray(0, 4 * MiB + 1)), 413, 'payloadTooLarge');
    expect(await json(hq('GET', '/releases/2.3.1/x64'))).toMatchObject({ received: 0 });
  });

  test('through the CLI: the file and its binary, one line per result; bad input is one line and its exit code', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vb-release-cli-'));
    const r = makeRelease('3.0.0', randomBytes(3 * MiB + 7));
    writeFileSync(join(dir, 'venue-box-3.0.0'), r.bytes);
    writeFileSync(join(dir, 'venue-box-3.0.0.release.json'), JSON.stringify(r.signed));
    const args = ['--data-dir', central.dataDir, '--tenant', TENANT];
    const up = await centralCli(['release', 'upload', join(dir, 'venue-box-3.0.0.release.json'), ...args]);
    expect(up, up.stderr).toMatchObject({ code: 0 });
    expect(up.stdout).toMatch(
      new RegExp(`^release 3.0.0/x64 uploaded: ${r.bytes.length} bytes, sha256 ${r.manifest.sha256}$`, 'm'),
    );
    const again = await centralCli(['release', 'upload', join(dir, 'venue-box-3.0.0.release.json'), ...args]);
    expect(again.stdout).toMatch(/^release 3.0.0\/x64 is uploaded already/m);
    const list = await centralCli(['release', 'list', '--json', '--data-dir', central.dataDir]);
    expect(JSON.parse(list.stdout)).toContainEqual(
      expect.objectContaining({ id: '3.0.0/x64', state: 'ready', sha256: r.manifest.sha256, uploadedBy: 'cli' }),
    );
    expect((await centralCli(['release', 'list', '--data-dir', central.dataDir])).stdout).toMatch(
      /3\.0\.0\/x64\s+ready/,
    );

    const oneLine = (run: { stderr: string }, pattern: RegExp) => {
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(pattern);
    };
    const missing = await centralCli(['release', 'upload', join(dir, 'none.release.json'), ...args]);
    expect(missing.code).toBe(66);
    oneLine(missing, /cannot read/);
    const bad = makeRelease('3.0.1', randomBytes(10));
    writeFileSync(
      join(dir, 'bad.release.json'),
      JSON.stringify({ ...bad.signed, manifest: bad.signed.manifest.replace('3.0.1', '3.0.2') }),
    );
    writeFileSync(join(dir, 'bad'), bad.bytes);
    const tampered = await centralCli(['release', 'upload', join(dir, 'bad.release.json'), ...args]);
    expect(tampered.code).toBe(65);
    oneLine(tampered, /does not verify/);
    writeFileSync(join(dir, 'short.release.json'), JSON.stringify(makeRelease('3.0.3', randomBytes(20)).signed));
    writeFileSync(join(dir, 'short'), randomBytes(19));
    const short = await centralCli(['release', 'upload', join(dir, 'short.release.json'), ...args]);
    expect(short.code).toBe(65);
    oneLine(short, /has 19 bytes; the release file says 20/);
  });

  test.skipIf(skipWithout(import.meta.url, 'zstd'))(
    'a newer release gets a zstd patch from an older one, which turns the old binary into the new',
    async () => {
      const base = randomBytes(3 * MiB);
      const next = Buffer.concat([base.subarray(0, MiB), randomBytes(4096), base.subarray(MiB), randomBytes(1000)]);
      const older = makeRelease('4.0.0', base, 'arm64');
      const newer = makeRelease('4.1.0', next, 'arm64');
      expect((await upload(older)).state).toBe('ready');
      expect((await upload(newer)).state).toBe('ready');
      let entry: { patches: { from: string; fromVersion: string; size: number }[] } | undefined;
      for (let i = 0; i < 100 && !entry?.patches.length; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const list = (await json(hq('GET', '/releases'))) as { id: string; patches: [] }[];
        entry = list.find((x) => x.id === '4.1.0/arm64');
      }
      expect(entry!.patches).toEqual([{ from: older.manifest.sha256, fromVersion: '4.0.0', size: expect.any(Number) }]);
      const size = entry!.patches[0]!.size;
      expect(size).toBeLessThan(next.length / 2);

      const device = await enrolledDevice(central);
      const res = await device.download(RELEASE_PATHS.patch(newer.manifest.sha256, older.manifest.sha256), {
        range: `bytes=0-${size - 1}`,
      });
      expect(res.status).toBe(206);
      const dir = mkdtempSync(join(tmpdir(), 'vb-patch-'));
      writeFileSync(join(dir, 'old'), base);
      writeFileSync(join(dir, 'patch'), res.bytes);
      const applied = spawnSync('zstd', [
        '-d',
        '-q',
        '--long=27',
        `--patch-from=${join(dir, 'old')}`,
        join(dir, 'patch'),
        '-o',
        join(dir, 'new'),
      ]);
      expect(applied.status, applied.stderr.toString()).toBe(0);
      expect(sha256(readFileSync(join(dir, 'new')))).toBe(newer.manifest.sha256);
    },
  );
});

describe('downloads for boxes', () => {
  let r: Release;
  let device: SimDevice;
  beforeAll(async () => {
    r = makeRelease('5.0.0', randomBytes(3 * MiB + 333));
    await upload(r);
    device = await enrolledDevice(central);
  });

  test('a Range answers 206 with the bytes of the chunks covering it, its end held to the last byte', async () => {
    const url = RELEASE_PATHS.binary(r.manifest.sha256);
    for (const [start, end] of [
      [0, 99],
      [MiB - 10, MiB + 10],
      [1_000_000, 3_100_000],
      [3 * MiB, 3 * MiB + 332],
    ] as const) {
      const res = await device.download(url, { range: `bytes=${start}-${end}` });
      expect(res.status).toBe(206);
      expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${r.bytes.length}`);
      expect(res.bytes.equals(r.bytes.subarray(start, end + 1))).toBe(true);
    }
    const tail = await device.download(url, { range: `bytes=${r.bytes.length - 5}-${r.bytes.length + 1000}` });
    expect(tail.headers.get('content-range')).toBe(
      `bytes ${r.bytes.length - 5}-${r.bytes.length - 1}/${r.bytes.length}`,
    );
    expect(tail.bytes.equals(r.bytes.subarray(-5))).toBe(true);
  });

  test('no Range, a bigger one or one past the end: 416 saying the rule; an unknown release: 404', async () => {
    const url = RELEASE_PATHS.binary(r.manifest.sha256);
    const asJson = (a: Awaited<ReturnType<SimDevice['download']>>) =>
      new Response(a.bytes, { status: a.status, headers: a.headers });
    const none = await expectApiError(asJson(await device.download(url)), 416, 'rangeNotSatisfiable', [
      String(r.bytes.length),
    ]);
    expect(none.message).toMatch(/bytes=A-B, at most 8388608 bytes/);
    await expectApiError(
      asJson(await device.download(url, { range: `bytes=0-${8 * MiB}` })),
      416,
      'rangeNotSatisfiable',
    );
    await expectApiError(asJson(await device.download(url, { range: 'bytes=0-' })), 416, 'rangeNotSatisfiable');
    const past = await device.download(url, { range: `bytes=${r.bytes.length}-${r.bytes.length + 5}` });
    expect(past.headers.get('content-range')).toBe(`bytes */${r.bytes.length}`);
    await expectApiError(asJson(past), 416, 'rangeNotSatisfiable');
    const unknown = await device.download(RELEASE_PATHS.binary('0'.repeat(64)), { range: 'bytes=0-9' });
    await expectApiError(asJson(unknown), 404, 'notFound');
    const noPatch = await device.download(RELEASE_PATHS.patch(r.manifest.sha256, '1'.repeat(64)), {
      range: 'bytes=0-9',
    });
    await expectApiError(asJson(noPatch), 404, 'notFound');
  });

  test("another tenant's device gets 404; an unsigned request or a wrong signature 401", async () => {
    expect((await centralCli(['import', writeTenantB(), '--data-dir', central.dataDir])).code).toBe(0);
    const code = await centralCli([
      'enrol',
      '--data-dir',
      central.dataDir,
      '--tenant',
      TENANT_B.id,
      '--venue',
      TENANT_B.venues[0]!.id,
    ]);
    const other = new SimDevice(central.url(''));
    expect((await other.enrol(code.stdout.trim().split('\n').pop()!)).status).toBe(201);
    const url = RELEASE_PATHS.binary(r.manifest.sha256);
    expect((await other.download(url, { range: 'bytes=0-9' })).status).toBe(404);
    const unsigned = await fetch(central.url(url), { headers: { range: 'bytes=0-9' } });
    await expectApiError(unsigned, 401, 'unauthorized');
    const forged = await fetch(central.url(url), {
      headers: { range: 'bytes=0-9', 'x-tenant': TENANT, 'x-device': other.deviceId, 'x-signature': 'AAAA' },
    });
    await expectApiError(forged, 401, 'unauthorized');
  });
});

describe('rollouts', STORY, () => {
  const [venueOther, venueA, venueB] = CENTRAL_DEMO.venues as [string, string, string];
  const v6 = makeRelease('6.0.0', randomBytes(64 * 1024));
  const v7 = makeRelease('7.0.0', randomBytes(64 * 1024));
  const v7arm = makeRelease('7.0.0', randomBytes(64 * 1024), 'arm64');
  let devices: SimDevice[];
  let silent: SimDevice;
  let rollout: string;

  /** The release the long poll names for a device now (its version), or null. */
  const targetOf = async (d: SimDevice): Promise<string | null> => {
    const res = await d.catalogue(0);
    expect(res.status).toBe(200);
    return res.body.release === null ? null : JSON.parse(res.body.release.release.manifest).version;
  };
  const targets = async () => Promise.all(devices.map(targetOf));
  const byBucket = (ds: SimDevice[]) =>
    [...ds].sort((a, b) => stableBucket(TENANT, a.deviceId) - stableBucket(TENANT, b.deviceId));

  beforeAll(async () => {
    for (const r of [v6, v7, v7arm]) await upload(r);
    devices = [];
    for (const venue of [venueA, venueA, venueA, venueB, venueB]) devices.push(await enrolledDevice(central, venue));
    for (const d of devices) expect((await d.hello({ update: report({}) })).status).toBe(200);
    // Enrolled, never said hello: its arch is unknown, so no release is named for it.
    silent = await enrolledDevice(central, venueOther);
  }, 60_000);

  test('a rollout needs a ready release of its version and well-formed stages', async () => {
    await expectApiError(
      await hq('POST', '/rollouts', { version: '6.6.6', devices: { all: true } }),
      400,
      'invalidField',
      ['/version'],
    );
    await expectApiError(
      await hq('POST', '/rollouts', { version: '6.0.0', devices: { all: true }, stages: [50, 40, 100] }),
      400,
      'invalidField',
      ['/stages'],
    );
    await expectApiError(
      await hq('POST', '/rollouts', { version: '6.0.0', devices: { all: true }, stages: [10, 90] }),
      400,
      'invalidField',
      ['/stages'],
    );
    await expectApiError(
      await hq('POST', '/rollouts', { version: '6.0.0', devices: { all: true }, startsAt: '0000-01-01T00:00:00Z' }),
      400,
      'invalidField',
      ['/startsAt'],
    );
    const bad = await hq('POST', '/rollouts', { version: '6.0.0', devices: { percent: 0 } });
    expect(bad.status).toBe(400);
    expect((await hq('GET', '/rollouts')).status).toBe(200);
  });

  test('a canary of 10% of the selected venues gets the target first, with the release and its URL', async () => {
    const res = await hq('POST', '/rollouts', {
      version: '6.0.0',
      devices: { venues: [venueA, venueB] },
      stageMinutes: 0,
    });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toMatchObject({
      version: '6.0.0',
      state: 'active',
      stages: [10, 100],
      window: 'closed',
      stage: { index: 0, percent: 10 },
    });
    rollout = body.id;
    const canary = byBucket(devices)[0]!;
    expect(await targets()).toEqual(devices.map((d) => (d === canary ? '6.0.0' : null)));
    expect((await canary.catalogue(0)).body.release).toEqual({
      rollout,
      release: v6.signed,
      url: RELEASE_PATHS.binary(v6.manifest.sha256),
      patches: [],
      window: 'closed',
    });
    expect(await targetOf(silent)).toBeNull();
    const detail = await json(hq('GET', `/rollouts/${rollout}`));
    expect(detail).toMatchObject({ selected: 5, inStage: 1, running: 0, counts: { pending: 5, healthy: 0 } });
  });

  test('advances once a device of the stage is healthy on it; counts show in the rollout and the device list', async () => {
    const reporter = byBucket(devices)[0]!;
    // A report from outside the stage does not advance it.
    await byBucket(devices)[1]!.hello({ update: report({ state: 'idle', rollout }) });
    expect((await json(hq('GET', `/rollouts/${rollout}`))).stage.index).toBe(0);
    expect(
      (await reporter.hello({ update: report({ version: '6.0.0', state: 'healthy', target: '6.0.0', rollout }) }))
        .status,
    ).toBe(200);
    const detail = await json(hq('GET', `/rollouts/${rollout}`));
    expect(detail).toMatchObject({ stage: { index: 1, percent: 100 }, inStage: 5, running: 1 });
    expect(detail.counts).toMatchObject({ healthy: 1, idle: 1, pending: 3 });
    expect(await targets()).toEqual(devices.map(() => '6.0.0'));
    const downloading = devices.find((d) => d !== reporter)!;
    await downloading.hello({
      update: report({ state: 'downloading', target: '6.0.0', rollout, progress: { bytes: 100, total: 400 } }),
    });
    const listed = await json(hq('GET', '/devices'));
    expect(listed).toContainEqual(
      expect.objectContaining({
        id: downloading.deviceId,
        version: '5.9.0',
        arch: 'x64',
        update: expect.objectContaining({ state: 'downloading', progress: { bytes: 100, total: 400 } }),
      }),
    );
    expect(listed).toContainEqual(
      expect.objectContaining({ id: silent.deviceId, version: null, arch: null, update: null }),
    );
    const cli = await centralCli(['devices', '--data-dir', central.dataDir]);
    expect(cli.stdout).toMatch(/VERSION\s+ARCH\s+UPDATE/);
    expect(cli.stdout).toMatch(/5\.9\.0\s+x64\s+downloading 6\.0\.0 25%/);
    const releases = (await json(hq('GET', '/releases'))) as {
      id: string;
      devices: { running: number; states: Record<string, number> };
    }[];
    expect(releases.find((r) => r.id === '6.0.0/x64')!.devices).toMatchObject({
      running: 1,
      states: { healthy: 1, downloading: 1 },
    });
    expect(releases.find((r) => r.id === '7.0.0/arm64')!.devices.running).toBe(0);
  });

  test('halts itself when too many roll back; a halted rollout names no release to those not on it', async () => {
    const healthy = devices.find((d) => d.deviceId === byBucket(devices)[0]!.deviceId)!;
    await healthy.hello({ update: report({ version: '6.0.0', state: 'healthy', target: '6.0.0', rollout }) });
    const others = devices.filter((d) => d !== healthy);
    // A poll waiting for a change is answered as soon as the rollout halts: woken if it waits already, at once
    // if it arrives after the halt, since it names the rollout it was told of.
    const rev = (await others[0]!.catalogue(0)).body.rev;
    const waiting = others[0]!.catalogue(rev, 20, false, rollout);
    const started = Date.now();
    for (const d of others.slice(0, 2)) {
      await d.hello({ update: report({ state: 'rolledBack', target: '6.0.0', rollout, reason: 'crashLoop' }) });
    }
    const woken = await waiting;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(woken.body.release).toBeNull();
    const detail = await json(hq('GET', `/rollouts/${rollout}`));
    expect(detail.state).toBe('halted');
    // The first rollback of two reports already passed the share: 1 / (1 + 1) > 0.2.
    expect(detail.haltReason).toMatch(/^1 of 2 devices reporting rolled back/);
    expect(detail.counts).toMatchObject({ healthy: 1, rolledBack: 2 });
    expect(await targetOf(healthy)).toBe('6.0.0');
    for (const d of others) expect(await targetOf(d)).toBeNull();
    // Asked after the halt, naming the halted rollout: answered at once, with no release.
    const late = Date.now();
    const told = await others[1]!.catalogue(rev, 20, false, rollout);
    expect(Date.now() - late).toBeLessThan(10_000);
    expect(told.body.release).toBeNull();
    // Naming what the central names (none) and nothing else changed, the poll waits its wait out.
    const current = (await others[1]!.catalogue(0)).body.rev;
    const quiet = Date.now();
    expect((await others[1]!.catalogue(current, 2, false, 'none')).body.release).toBeNull();
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(1_900);
  });

  test('resumed, it names the release again and the rollbacks seen no longer halt it; halted by hand too', async () => {
    const res = await hq('POST', `/rollouts/${rollout}/resume`);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ state: 'active', haltReason: null });
    const another = devices.find((d) => d !== byBucket(devices)[0]!)!;
    await another.hello({ update: report({ state: 'downloading', target: '6.0.0', rollout }) });
    expect((await json(hq('GET', `/rollouts/${rollout}`))).state).toBe('active');
    expect((await targets()).filter((t) => t === '6.0.0').length).toBe(devices.length);
    const halted = await hq('POST', `/rollouts/${rollout}/halt`, { reason: 'a bug at a venue' });
    expect(await json(halted)).toMatchObject({ state: 'halted', haltReason: 'a bug at a venue' });
    await expectApiError(await hq('POST', '/rollouts/nope/halt'), 404, 'notFound');
  });

  test('a new rollout supersedes the current one: one venue, then a stable half of all devices', async () => {
    const venue = await hq('POST', '/rollouts', { version: '7.0.0', devices: { venues: [venueB] }, stages: [100] });
    expect(venue.status).toBe(201);
    const second = (await json(venue)).id;
    expect((await json(hq('GET', `/rollouts/${rollout}`))).state).toBe('superseded');
    await expectApiError(await hq('POST', `/rollouts/${rollout}/resume`), 409, 'conflict');
    expect(await targets()).toEqual(devices.map((d) => (d.venue === venueB ? '7.0.0' : null)));
    const answer = (await devices[4]!.catalogue(0)).body.release;
    expect(answer).toMatchObject({
      rollout: second,
      release: v7.signed,
      url: RELEASE_PATHS.binary(v7.manifest.sha256),
    });

    const half = await hq('POST', '/rollouts', {
      version: '7.0.0',
      devices: { percent: 50 },
      stages: [100],
      window: { from: '02:00', to: '05:00' },
    });
    expect(half.status).toBe(201);
    expect(await targets()).toEqual(devices.map((d) => (stableBucket(TENANT, d.deviceId) < 5000 ? '7.0.0' : null)));
    const named = devices.find((d) => stableBucket(TENANT, d.deviceId) < 5000);
    if (named) expect((await named.catalogue(0)).body.release.window).toEqual({ from: '02:00', to: '05:00' });
    const list = (await json(hq('GET', '/rollouts'))) as { state: string }[];
    expect(list.filter((x) => x.state !== 'superseded')).toHaveLength(1);
  });

  test('all devices, the release of their own arch; a rollout that starts later names none yet', async () => {
    await devices[0]!.hello({ update: report({ arch: 'arm64' }) });
    expect((await hq('POST', '/rollouts', { version: '7.0.0', devices: { all: true }, stages: [100] })).status).toBe(
      201,
    );
    expect(await targets()).toEqual(devices.map(() => '7.0.0'));
    expect((await devices[0]!.catalogue(0)).body.release.release).toEqual(v7arm.signed);
    expect((await devices[1]!.catalogue(0)).body.release.release).toEqual(v7.signed);
    expect(await targetOf(silent)).toBeNull();
    const later = new Date(Date.now() + 3_600_000).toISOString();
    expect((await hq('POST', '/rollouts', { version: '7.0.0', devices: { all: true }, startsAt: later })).status).toBe(
      201,
    );
    expect(await targets()).toEqual(devices.map(() => null));
  });
});
