import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ProcessError } from '../../shared/errors.js';
import { signManifest, verifyRelease } from '../../shared/release.js';
import { newReleaseKey, parseReleaseKey, readReleaseKey, releaseKeyText, writeReleaseKey } from './release-key.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vb-release-key-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const secretOf = (text: string) => (JSON.parse(text) as { secretKey: string }).secretKey;

/** The ProcessError a call throws. */
function failure(fn: () => unknown): ProcessError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProcessError) return err;
    throw err;
  }
  throw new Error('did not throw');
}

describe('release key files', () => {
  test('a key written and read back is the same key, its file readable by its owner only', () => {
    const key = newReleaseKey();
    const file = join(dir, 'first.json');
    writeReleaseKey(file, key);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(JSON.parse(text)).toMatchObject({ type: 'venue-box release key', publicKey: key.publicKey, keys: [] });
    expect(readReleaseKey(file)).toEqual(key);
  });

  test('an existing file is never overwritten (73), and keeps its key', () => {
    const file = join(dir, 'kept.json');
    writeReleaseKey(file, newReleaseKey());
    const before = readFileSync(file, 'utf8');
    const err = failure(() => writeReleaseKey(file, newReleaseKey()));
    expect(err).toMatchObject({ reason: 'cantCreate', message: expect.stringMatching(/exists already/) });
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  test('a missing file is noInput (66); a file that is no key is data (65), and no message quotes the secret', () => {
    expect(failure(() => readReleaseKey(join(dir, 'nope.json')))).toMatchObject({ reason: 'noInput' });
    const key = newReleaseKey();
    const text = releaseKeyText(key);
    const secret = secretOf(text);
    const other = newReleaseKey();
    const broken = [
      text.replace('{', '{,'), // not JSON: JSON.parse's own message would quote the text
      text.slice(0, text.indexOf(secret) + 20), // cut inside the secret
      text.replace('venue-box release key', 'something else'),
      text.replace(secret, `${secret.slice(0, 80)}!!!!!!==`), // not base64 of 64 bytes
      text.replace(key.publicKey, other.publicKey), // halves that do not match
      JSON.stringify({ ...JSON.parse(text), extra: 1 }),
      '[]',
    ];
    for (const bad of broken) {
      const err = failure(() => parseReleaseKey(bad, 'k.json'));
      expect(err.reason, bad).toBe('data');
      expect(err.message).toMatch(/^k\.json is not a venue-box release key file: /);
      expect(err.message).not.toContain(secret.slice(0, 12));
      expect(err.message).not.toContain(secret.slice(-20, -2));
    }
  });

  test('a rotated key carries the chain; each rotation is signed by the key before it', () => {
    const first = newReleaseKey();
    const second = newReleaseKey(first);
    const third = newReleaseKey(second);
    expect(third.keys.map((r) => [r.signedBy, r.publicKey])).toEqual([
      [first.publicKey, second.publicKey],
      [second.publicKey, third.publicKey],
    ]);
    expect(parseReleaseKey(releaseKeyText(third), 'k')).toEqual(third);
    // What verifyRelease makes of it: a box trusting the first key accepts the third's release, then trusts it only.
    const manifest = {
      format: 1 as const,
      version: '1.0.0',
      arch: 'x64' as const,
      sha256: '0'.repeat(64),
      size: 1,
      node: '24.21.0',
      schema: { box: 12 },
      notes: '',
      createdAt: '2026-11-27T09:00:00.000Z',
      rollback: false,
    };
    expect(verifyRelease(signManifest(manifest, third.secretKey, third.keys), [first.publicKey]).trusted).toEqual([
      third.publicKey,
    ]);
  });

  test('a chain that does not lead to the key is refused', () => {
    const first = newReleaseKey();
    const second = newReleaseKey(first);
    const stranger = newReleaseKey();
    const text = releaseKeyText({ ...stranger, keys: second.keys });
    expect(failure(() => parseReleaseKey(text, 'k')).message).toMatch(/last rotation introduces another key/);
    const third = newReleaseKey(second);
    const gap = releaseKeyText({ ...third, keys: [third.keys[1]!, third.keys[0]!] });
    expect(failure(() => parseReleaseKey(gap, 'k')).message).toMatch(/rotation 2 is signed by another key/);
  });

  test('a file that is a directory is data (65)', () => {
    expect(failure(() => readReleaseKey(dir))).toMatchObject({ reason: 'data' });
    writeFileSync(join(dir, 'empty.json'), '', { mode: 0o600 });
    expect(failure(() => readReleaseKey(join(dir, 'empty.json'))).message).toMatch(/not a release key|JSON/);
  });

  test('a key file others can read is not used, as ssh refuses such a private key', () => {
    const file = join(dir, 'open.key');
    writeFileSync(file, releaseKeyText(newReleaseKey()), { mode: 0o644 });
    expect(failure(() => readReleaseKey(file))).toMatchObject({
      reason: 'data',
      message: expect.stringMatching(/chmod 600/),
    });
  });
});
