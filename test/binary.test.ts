import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import pkg from '../package.json';
import { loadConfigFile, resolveConfig } from '../src/config.js';
import { checkpointsOnItsWorker, type RunningBinary, servesAnOrder, startBinary } from './support/binary.js';
import { DEMO, requestToken } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { FAST_SYNC, waitFor } from './support/sync.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_CONFIG = join(root, 'native-config/venue-box.jsonc');

describe('native-config/venue-box.jsonc', () => {
  test('loads, and lists every option with its default value', () => {
    const file = loadConfigFile(DEFAULT_CONFIG) as Record<string, unknown>;
    const defaults = resolveConfig({});
    expect(resolveConfig(file)).toEqual(defaults);
    // Every option that has a default is written out (a new option in src/config.ts belongs here too).
    expect(keyPaths(file)).toEqual(keyPaths(defaults));
    // Options without a default are shown commented out.
    expect(readFileSync(DEFAULT_CONFIG, 'utf8')).toMatch(/\/\/ "provisioningFile":/);
  });
});

// Builds dist/venue-box with build.sh (about 10 s here) once for the file, before any of its suites (they run in
// any order: test/support/story.ts).
beforeAll(() => {
  execFileSync('bash', ['build.sh'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], timeout: 280_000 });
}, 300_000);

// Copies the binary alone into an empty directory and drives it as the box is used: nothing from this checkout
// (node_modules, node on PATH) is reachable from there.
describe('the single binary', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let box: RunningBinary | undefined;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'vb-binary-'));
    copyFileSync(join(root, 'dist/venue-box'), join(dir, 'venue-box'));
    mkdirSync(join(dir, 'empty-path'));
    // A clean environment: no NODE_PATH or NODE_OPTIONS, a PATH without node, its own addon cache.
    env = { PATH: join(dir, 'empty-path'), HOME: dir, LANG: 'C', VENUE_BOX_CACHE: join(dir, 'cache') };
  });

  afterAll(async () => {
    await box?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true }); // a 90 MB copy of the binary
  });

  test('--version and --help run from an empty directory', () => {
    const run = (arg: string) => execFileSync('./venue-box', [arg], { cwd: dir, env, encoding: 'utf8' });
    const before = readdirSync(dir).filter((f) => f !== 'cache');
    // The binary carries the Node it was built with: the one running the tests (build.sh's NODE_BIN).
    expect(run('--version')).toBe(`${pkg.version} (Node ${process.versions.node})\n`);
    expect(run('--help')).toContain('venue-box serve');
    // Nothing written beside the binary (the addon cache is where VENUE_BOX_CACHE points), whichever test of this
    // file ran before (the serving one leaves its data directory and config there).
    expect(readdirSync(dir).filter((f) => f !== 'cache')).toEqual(before);
    expect(before).toContain('venue-box');
  });

  test('serves a token, the nearest venues, a socket and an order', async () => {
    const cache = join(dir, 'cache');
    const extractedBefore = new Map(
      (existsSync(cache) ? readdirSync(cache) : []).map((f) => [f, statSync(join(cache, f)).ino]),
    );
    copyFileSync(DEFAULT_CONFIG, join(dir, 'venue-box.jsonc'));
    box = await startBinary(dir, env, [
      'serve',
      '--demo',
      '--config',
      'venue-box.jsonc',
      '--data-dir',
      join(dir, 'data'),
      '--port',
      '0',
      '--host',
      '127.0.0.1',
    ]);
    await servesAnOrder(box.port);
    await checkpointsOnItsWorker(box.port);
    await servesTheScreens(box.port);

    // The addons were written to the cache at first use, named by content hash (serialport's too once the
    // box loads it); the ones --version wrote were reused, not rewritten.
    const extracted = readdirSync(cache);
    for (const file of extracted) expect(file).toMatch(/^[\w.-]+-[0-9a-f]{16}\.node$/);
    expect(extracted.map((f) => f.replace(/-[0-9a-f]{16}\.node$/, ''))).toEqual(
      expect.arrayContaining(['better-sqlite3', 'uws']),
    );
    for (const [file, ino] of extractedBefore) expect(statSync(join(cache, file)).ino).toBe(ino);

    expect(await box.stop()).toBe(0);
    expect(box.logs.some((line) => line.includes('"venue-box stopped"'))).toBe(true);
  }, 60_000);
});

describe('the single binary on a machine whose C library is too old', () => {
  test('an addon it cannot load: one line naming the addon and the missing version, exit 78 (EX_CONFIG)', async () => {
    // The binary of the file's beforeAll. A glibc older than an addon needs is what a box on an older OS meets: made
    // here by an addon in the cache that asks for GLIBC_2.99 (same name and size, so the binary takes it).
    const dir = mkdtempSync(join(tmpdir(), 'vb-binary-glibc-'));
    try {
      copyFileSync(join(root, 'dist/venue-box'), join(dir, 'venue-box'));
      const env = { PATH: '/nonexistent', HOME: dir, LANG: 'C', VENUE_BOX_CACHE: join(dir, 'cache') };
      const serve = ['serve', '--demo', '--data-dir', join(dir, 'data'), '--port', '0', '--host', '127.0.0.1'];
      const first = await startBinary(dir, env, serve); // writes its addons to the cache
      expect(await first.stop()).toBe(0);
      const uws = readdirSync(join(dir, 'cache')).find((f) => f.startsWith('uws-'));
      const file = join(dir, 'cache', uws!);
      const image = readFileSync(file);
      const at = image.indexOf('GLIBC_2.36\0');
      expect(at).toBeGreaterThan(0);
      image.write('GLIBC_2.99', at, 'latin1');
      writeFileSync(file, image);
      const run = spawnSync('./venue-box', serve, { cwd: dir, env, encoding: 'utf8', timeout: 20_000 });
      expect(run.status).toBe(78);
      expect(run.stderr.trimEnd().split('\n')).toEqual([
        expect.stringMatching(/^venue-box: cannot load native addon uws from .*GLIBC_2\.99' not found/),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sync from the single binary', () => {
  let dir: string;
  let box: RunningBinary | undefined;
  let central: TestCentral | undefined;
  beforeAll(() => {
    // The binary build.sh made in the file's beforeAll.
    dir = mkdtempSync(join(tmpdir(), 'vb-binary-sync-'));
    copyFileSync(join(root, 'dist/venue-box'), join(dir, 'venue-box'));
  });
  afterAll(async () => {
    await box?.stop();
    await central?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('central serve needs --database-url: the embedded PostgreSQL is not in the binary', () => {
    let failure: { status?: number; stderr?: string } = {};
    try {
      execFileSync('./venue-box', ['central', 'serve', '--data-dir', join(dir, 'central')], {
        cwd: dir,
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (err) {
      failure = err as typeof failure;
    }
    expect(failure.status).toBe(69); // EX_UNAVAILABLE, worth a retry once a database is given (docs/operations.md "Exit codes")
    expect(failure.stderr).toMatch(/embedded PostgreSQL is not available.*pass --database-url/);
  });

  test('the binary box signs its batches on its worker thread and drains to a central', async () => {
    central = await startTestCentral();
    const env = { PATH: process.env.PATH, HOME: dir, VENUE_BOX_CACHE: join(dir, 'cache') };
    box = await startBinary(dir, env, [
      'serve',
      '--demo',
      '--data-dir',
      join(dir, 'data'),
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--config',
      writeFastSync(dir),
    ]);
    const code = await central.enrolCode(DEMO.openVenue);
    execFileSync(
      './venue-box',
      ['sync', 'enrol', '--data-dir', join(dir, 'data'), '--central', central.url(''), '--code', code],
      { cwd: dir, env },
    );
    const url = (path: string) => `http://127.0.0.1:${box!.port}${path}`;
    const tok = (await (
      await requestToken({ url }, { grant_type: 'password', username: 'kelner', password: 'kelner-demo-1' })
    ).json()) as { access_token: string };
    const res = await fetch(url('/ordering-api/api/order/new'), {
      method: 'POST',
      headers: { authorization: `Bearer ${tok.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        orderType: 'TAKE_AWAY',
        buckets: [{ venue: DEMO.openVenue, lines: [{ productId: 'zurek', quantity: 1 }] }],
      }),
    });
    const { orderId } = (await res.json()) as { orderId: string };
    await waitFor(
      'the order at the central',
      async () => (await central!.hq(`/hq-api/api/orders/${orderId}`).catch(() => undefined)) ?? undefined,
    );
  }, 60_000);
});

function writeFastSync(dir: string): string {
  const file = join(dir, 'fast-sync.json');
  writeFileSync(file, JSON.stringify(FAST_SYNC));
  return file;
}

/** Paths of the leaves of a JSON object: `auth.accessTokenTtlSeconds`, ... */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [prefix];
  return Object.entries(value)
    .flatMap(([key, sub]) => keyPaths(sub, prefix ? `${prefix}.${key}` : key))
    .sort();
}

/** The screens come from the binary's own assets (README "Screens"): index.html at /, and the hashed files it names. */
async function servesTheScreens(port: number): Promise<void> {
  const index = await fetch(`http://127.0.0.1:${port}/kitchen`);
  expect(index.status).toBe(200);
  expect(index.headers.get('cache-control')).toBe('no-cache');
  const assets = [...(await index.text()).matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  expect(assets).toHaveLength(2);
  for (const path of assets) {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  }
  expect((await fetch(`http://127.0.0.1:${port}/screens-api/bootstrap`)).status).toBe(200);
}
