import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import pkg from '../../../package.json';
import { MIGRATIONS } from '../../db/migrate.js';
import { ProcessError } from '../../shared/errors.js';
import { signManifest, verifyRelease } from '../../shared/release.js';
import { RELEASE_CHECKS } from '../../shared/release-schemas.js';
import { digestOf } from '../../shared/files.js';
import { archOf, currentInfo, parseInfoOutput } from './release-binary.js';
import { describeRelease, manifestOf } from './release-cli.js';
import { newReleaseKey } from './release-key.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vb-release-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const info = { version: '1.4.0-rc.2', arch: 'arm64' as const, node: '24.21.0', schema: { box: 14 } };

describe('release info', () => {
  test("this program's: its package version, this machine's arch and Node, the newest box migration", () => {
    expect(currentInfo()).toEqual({
      version: pkg.version,
      arch: process.arch,
      node: process.versions.node,
      schema: { box: MIGRATIONS.at(-1)!.version },
    });
  });

  test("a binary's output: its last line when that is the info, else nothing", () => {
    expect(parseInfoOutput(`${JSON.stringify(info)}\n`)).toEqual(info);
    expect(parseInfoOutput(`a warning\n${JSON.stringify(info)}\n`)).toEqual(info);
    expect(parseInfoOutput('')).toBeUndefined();
    expect(parseInfoOutput('venue-box: unknown command')).toBeUndefined();
    expect(parseInfoOutput(JSON.stringify({ ...info, arch: 'mips' }))).toBeUndefined();
    expect(parseInfoOutput(JSON.stringify({ ...info, version: 'v1' }))).toBeUndefined();
  });
});

describe('the manifest sign writes', () => {
  test("is what the binary says of itself, its digest and headquarters' notes; a box verifies it", () => {
    const digest = { sha256: 'cd'.repeat(32), size: 109_710_080 };
    const manifest = manifestOf(info, digest, {
      notes: 'line one\nline two',
      rollback: true,
      createdAt: '2026-11-27T09:00:00.000Z',
    });
    expect(RELEASE_CHECKS.manifest.Check(manifest)).toBe(true);
    expect(manifest).toMatchObject({ format: 1, ...info, ...digest, rollback: true });
    const key = newReleaseKey();
    const signed = signManifest(manifest, key.secretKey, key.keys);
    expect(verifyRelease(signed, [key.publicKey]).manifest).toEqual(manifest);

    const lines = Object.fromEntries(describeRelease(manifest, signed, [key.publicKey], [key.publicKey]));
    expect(lines).toMatchObject({
      release: 'venue-box 1.4.0-rc.2 for arm64, Node 24.21.0',
      schema: 'box 14',
      size: '109710080 bytes',
      notes: 'line one / line two',
      'signed by': key.publicKey,
    });
    expect(lines.rollback).toMatch(/^yes/);
    expect(lines.rotation).toBeUndefined();
  });

  test('verify names a rotation: the key boxes trust then, and the one they no longer trust', () => {
    const old = newReleaseKey();
    const next = newReleaseKey(old);
    const manifest = manifestOf(
      info,
      { sha256: '0'.repeat(64), size: 1 },
      {
        notes: '',
        rollback: false,
        createdAt: '2026-11-27T09:00:00.000Z',
      },
    );
    const signed = signManifest(manifest, next.secretKey, next.keys);
    const { trusted } = verifyRelease(signed, [old.publicKey]);
    const lines = Object.fromEntries(describeRelease(manifest, signed, trusted, [old.publicKey]));
    expect(lines.rotation).toBe(`boxes then trust ${next.publicKey}; they no longer trust ${old.publicKey}`);
    expect(lines.notes).toBe('-');
  });
});

describe('the binary to sign', () => {
  const failure = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      if (err instanceof ProcessError) return err;
      throw err;
    }
    throw new Error('did not throw');
  };

  test("this machine's node is its own architecture; a text file, a directory or nothing is not a binary", () => {
    expect(archOf(process.execPath)).toBe(process.arch);
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'not a program');
    expect(failure(() => archOf(text))).toMatchObject({ reason: 'data', message: expect.stringMatching(/not an ELF/) });
    expect(failure(() => archOf(dir))).toMatchObject({ reason: 'data' });
    expect(failure(() => archOf(join(dir, 'missing')))).toMatchObject({ reason: 'noInput' });
  });

  test('an ELF of another machine (32-bit arm) is named, not run', () => {
    const header = Buffer.alloc(64);
    header.writeUInt32BE(0x7f454c46, 0);
    header.writeUInt16LE(0x28, 18);
    const file = join(dir, 'armhf');
    writeFileSync(file, header);
    expect(failure(() => archOf(file)).message).toMatch(/is an arm executable; releases are for x64 and arm64/);
  });

  test('its digest is read as a stream', async () => {
    const file = join(dir, 'bytes');
    writeFileSync(file, Buffer.alloc(3 * 1024 * 1024 + 7, 1));
    expect(await digestOf(file)).toEqual({
      sha256: createHash('sha256').update(readFileSync(file)).digest('hex'),
      size: 3 * 1024 * 1024 + 7,
    });
  });
});
