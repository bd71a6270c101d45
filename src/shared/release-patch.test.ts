import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { skipWithout } from '../../test/support/system-packages.js';
import { applyPatch, makePatch, PatchError, PatchToolMissing, zstdAvailable } from './release-patch.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vb-patch-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Two "binaries": random bytes, the second with an edit inside and a tail appended (a new version's changes). */
function twoVersions(size = 3 * 1024 * 1024): { from: string; to: string; toBytes: Buffer } {
  const a = randomBytes(size);
  const b = Buffer.concat([
    a.subarray(0, size >> 1),
    Buffer.from('version 0.1.1'),
    a.subarray(size >> 1),
    randomBytes(5000),
  ]);
  const from = join(dir, `from-${randomBytes(3).toString('hex')}`);
  const to = join(dir, `to-${randomBytes(3).toString('hex')}`);
  writeFileSync(from, a);
  writeFileSync(to, b);
  return { from, to, toBytes: b };
}

const filesIn = (d: string) => readdirSync(d).sort();

describe.skipIf(skipWithout(import.meta.url, 'zstd'))('zstd patches', () => {
  test('a patch made and applied yields the exact bytes, and is small', async () => {
    const { from, to, toBytes } = twoVersions();
    const patch = join(dir, 'a.patch');
    await makePatch(from, to, patch);
    expect(statSync(patch).size).toBeLessThan(20_000); // the edit and the 5000 new bytes, not the 3 MiB
    const out = join(dir, 'a.out');
    await applyPatch(from, patch, out, { maxOutputBytes: toBytes.length });
    expect(sha256(readFileSync(out))).toBe(sha256(toBytes));
  });

  test('a truncated or corrupt patch rejects and writes nothing', async () => {
    const { from, to } = twoVersions();
    const patch = join(dir, 'b.patch');
    await makePatch(from, to, patch);
    const good = readFileSync(patch);
    const truncated = join(dir, 'b-truncated.patch');
    writeFileSync(truncated, good.subarray(0, good.length - 20));
    const corrupt = join(dir, 'b-corrupt.patch');
    writeFileSync(corrupt, Buffer.from(good).fill(0x55, good.length >> 1, (good.length >> 1) + 8));
    const before = filesIn(dir);
    for (const bad of [truncated, corrupt]) {
      await expect(applyPatch(from, bad, join(dir, 'b.out'))).rejects.toThrow(PatchError);
    }
    expect(filesIn(dir)).toEqual(before); // neither b.out nor a temp file beside it
  });

  test('a patch applied to another base rejects (zstd frame checksum), leaving nothing', async () => {
    const { from, to } = twoVersions();
    const patch = join(dir, 'c.patch');
    await makePatch(from, to, patch);
    // The same size with a few bytes changed: what a box running another build than the patch's base has.
    const other = join(dir, 'c-other-base');
    const bytes = readFileSync(from);
    bytes.write('another build', 1000);
    writeFileSync(other, bytes);
    const before = filesIn(dir);
    await expect(applyPatch(other, patch, join(dir, 'c.out'))).rejects.toThrow(/does not apply.*(checksum|corrupt)/i);
    expect(filesIn(dir)).toEqual(before);
  });

  test('an output over maxOutputBytes rejects and writes nothing', async () => {
    const { from, to, toBytes } = twoVersions();
    const patch = join(dir, 'd.patch');
    await makePatch(from, to, patch);
    const before = filesIn(dir);
    await expect(applyPatch(from, patch, join(dir, 'd.out'), { maxOutputBytes: toBytes.length - 1 })).rejects.toThrow(
      /more than/,
    );
    expect(filesIn(dir)).toEqual(before);
  });

  test('an existing output file is replaced whole', async () => {
    const { from, to, toBytes } = twoVersions(256 * 1024);
    const patch = join(dir, 'e.patch');
    await makePatch(from, to, patch);
    const out = join(dir, 'e.out');
    writeFileSync(out, 'old');
    await applyPatch(from, patch, out);
    expect(readFileSync(out).equals(toBytes)).toBe(true);
  });
});

test('without zstd on PATH, makePatch throws PatchToolMissing naming the Debian package', async () => {
  const path = process.env.PATH;
  process.env.PATH = '/nonexistent';
  try {
    expect(zstdAvailable()).toBe(false);
    await expect(makePatch('/a', '/b', join(tmpdir(), 'x.patch'))).rejects.toThrow(PatchToolMissing);
    await expect(makePatch('/a', '/b', join(tmpdir(), 'x.patch'))).rejects.toThrow(/apt-get install zstd/);
  } finally {
    process.env.PATH = path;
  }
});
