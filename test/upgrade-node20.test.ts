import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { runCli } from './support/cli.js';

// A box flashed with the Node 20 build and updated to this one keeps its data directory (docs/architecture.md
// "Runtime and native addons"). test/fixtures/node20-data-dir.tar.gz is the data directory of the Node 20 single
// binary (commit 92c6508, uWS 20.30, better-sqlite3 12): `venue-box serve --demo`, one order by kelner with a
// kitchen note "Kraków, café" (ORDER below), stopped with SIGTERM, then `venue-box backup now`.
const ORDER = '01a2199a-e5b9-716e-b69c-f6a3ca6a1330';
const NOTE = 'Kraków, café';
const FIXTURE = fileURLToPath(new URL('fixtures/node20-data-dir.tar.gz', import.meta.url));

const dirs: string[] = [];
const boxes: TestBox[] = [];
afterAll(async () => {
  for (const box of boxes.splice(0)) await box.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const tmp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'vb-node20-'));
  dirs.push(dir);
  return dir;
};
const cli = (...args: string[]) => runCli(args);
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Starts this build on `dataDir` and reads the Node 20 box's order back as kelner. */
async function orderOn(
  dataDir: string,
): Promise<{ box: TestBox; order: { id: string; buckets: { lines: { extra?: { note: string } }[] }[] } }> {
  const box = await startTestBox({ dataDir });
  boxes.push(box);
  const staff = await box.token('kelner', 'kelner-demo-1');
  const res = await box.get(`/ordering-api/api/order/${ORDER}`, staff.access_token, { 'x-tenant': DEMO.tenant });
  expect(res.status).toBe(200);
  return { box, order: (await res.json()) as never };
}

describe('a data directory of the Node 20 build', () => {
  test('opens unchanged: its order, its token key, a clean stock check; its backup verifies and restores', async () => {
    const root = tmp();
    expect(spawnSync('tar', ['-xzf', FIXTURE, '-C', root]).status).toBe(0);
    const dataDir = join(root, 'data');
    const keyFile = join(dataDir, 'jwt-ed25519.json');
    const keyBefore = sha256(keyFile);

    const { box, order } = await orderOn(dataDir);
    expect(order.id).toBe(ORDER);
    expect(order.buckets[0]!.lines[0]!.extra).toEqual({ note: NOTE });
    expect(await box.stop()).toBe(0);
    boxes.splice(boxes.indexOf(box), 1);
    expect(sha256(keyFile)).toBe(keyBefore); // the same signing key: tokens the Node 20 box issued stay valid

    const stock = cli('stock', 'check', '--data-dir', dataDir);
    expect(stock.status, stock.stderr).toBe(0);

    const [backup] = readdirSync(join(dataDir, 'backups'));
    const file = join(dataDir, 'backups', backup!);
    expect(cli('backup', 'verify', file).status).toBe(0);
    const restored = join(tmp(), 'restored');
    const restore = cli('restore', file, '--data-dir', restored);
    expect(restore.status, restore.stderr).toBe(0);
    const again = await orderOn(restored);
    expect(again.order.buckets[0]!.lines[0]!.extra).toEqual({ note: NOTE });
  });
});
