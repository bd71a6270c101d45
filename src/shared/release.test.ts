import nacl from 'tweetnacl';
import { describe, expect, test } from 'vitest';
import {
  compareVersions,
  ReleaseRefused,
  refusalFor,
  signManifest,
  signRotation,
  stableBucket,
  verifyRelease,
} from './release.js';
import type { KeyRotation, ReleaseManifest, SignedRelease } from './release-schemas.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

function newKey() {
  const pair = nacl.sign.keyPair();
  return { publicKey: b64(pair.publicKey), secretKey: pair.secretKey };
}

const manifest = (over: Partial<ReleaseManifest> = {}): ReleaseManifest => ({
  format: 1,
  version: '1.2.0',
  arch: 'arm64',
  sha256: 'ab'.repeat(32),
  size: 115_000_000,
  node: '24.21.0',
  schema: { box: 12 },
  notes: 'menu import, faster sync',
  createdAt: '2026-11-27T09:00:00.000Z',
  rollback: false,
  ...over,
});

/** verifyRelease's refusal, or undefined when it accepts. */
function refusal(signed: unknown, trusted: string[]): ReleaseRefused | undefined {
  try {
    verifyRelease(signed, trusted);
    return undefined;
  } catch (err) {
    if (err instanceof ReleaseRefused) return err;
    throw err;
  }
}

describe('verifyRelease', () => {
  const key = newKey();

  test('a release signed by a trusted key: its manifest, and the same keys trusted after', () => {
    const signed = signManifest(manifest(), key.secretKey, []);
    expect(verifyRelease(signed, [key.publicKey])).toEqual({ manifest: manifest(), trusted: [key.publicKey] });
    // The signed text is the manifest's JSON, which the box parses again: not an object it could be handed.
    expect(JSON.parse(signed.manifest)).toEqual(manifest());
  });

  test('signed by a key the box does not trust: refused (signature)', () => {
    const signed = signManifest(manifest(), newKey().secretKey, []);
    expect(refusal(signed, [key.publicKey])).toMatchObject({
      reason: 'signature',
      message: expect.stringMatching(/does not trust/),
    });
  });

  test("a manifest's text changed after signing (a version, a hash, one space): refused", () => {
    const signed = signManifest(manifest(), key.secretKey, []);
    for (const text of [
      signed.manifest.replace('"1.2.0"', '"9.9.9"'),
      signed.manifest.replace('abab', 'abac'),
      signed.manifest.replace('{"format"', '{ "format"'),
    ]) {
      expect(text).not.toBe(signed.manifest);
      expect(refusal({ ...signed, manifest: text }, [key.publicKey])?.message).toMatch(/signature does not verify/);
    }
  });

  test('a signature changed in one bit: refused', () => {
    const signed = signManifest(manifest(), key.secretKey, []);
    const sig = Buffer.from(signed.signature, 'base64');
    sig[10]! ^= 1;
    expect(refusal({ ...signed, signature: b64(sig) }, [key.publicKey])?.message).toMatch(/does not verify/);
  });

  test('not a signed release, or a signed text that is not a manifest of this program: refused', () => {
    expect(refusal({ manifest: '{}' }, [key.publicKey])?.message).toMatch(/not a signed release file/);
    expect(refusal(null, [key.publicKey])?.reason).toBe('signature');
    // Signed by the trusted key, but no manifest: the signature alone never makes a release.
    const other = signManifest({ ...manifest(), size: 0 }, key.secretKey, []);
    expect(refusal(other, [key.publicKey])?.message).toMatch(/not a release manifest/);
  });

  describe('key rotation', () => {
    const old = newKey();
    const next = newKey();
    const rotation = signRotation(old.secretKey, next.publicKey);

    test('a release by the new key with the rotation: accepted by a box that trusts the old key, which then trusts the new one only', () => {
      const signed = signManifest(manifest(), next.secretKey, [rotation]);
      expect(verifyRelease(signed, [old.publicKey]).trusted).toEqual([next.publicKey]);
      // A box that learned the new key already accepts it too (the rotation is skipped).
      expect(verifyRelease(signed, [next.publicKey]).trusted).toEqual([next.publicKey]);
    });

    test('after the rotation, a release signed by the retired key is refused', () => {
      const signedByNext = signManifest(manifest(), next.secretKey, [rotation]);
      const { trusted } = verifyRelease(signedByNext, [old.publicKey]);
      const signedByOld = signManifest(manifest({ version: '1.2.1' }), old.secretKey, []);
      expect(refusal(signedByOld, [old.publicKey])).toBeUndefined(); // before: fine
      expect(refusal(signedByOld, trusted)?.message).toMatch(/does not trust/);
      // Nor can the old key smuggle itself back: a release by it that carries the rotation is refused as well.
      expect(refusal(signManifest(manifest(), old.secretKey, [rotation]), [old.publicKey])?.reason).toBe('signature');
    });

    test('a chain of rotations is followed in order, from whichever key the box trusts', () => {
      const third = newKey();
      const chain = [rotation, signRotation(next.secretKey, third.publicKey)];
      const signed = signManifest(manifest(), third.secretKey, chain);
      expect(verifyRelease(signed, [old.publicKey]).trusted).toEqual([third.publicKey]);
      expect(verifyRelease(signed, [next.publicKey]).trusted).toEqual([third.publicKey]);
      // Another trusted key is kept: only the key that signed a rotation is retired.
      const spare = newKey().publicKey;
      expect(verifyRelease(signed, [spare, old.publicKey]).trusted.sort()).toEqual([spare, third.publicKey].sort());
    });

    test('a rotation signed by a key the box does not trust is ignored: the release is refused', () => {
      const stranger = newKey();
      const foreign = signRotation(stranger.secretKey, next.publicKey);
      const signed = signManifest(manifest(), next.secretKey, [foreign]);
      expect(refusal(signed, [old.publicKey])?.message).toMatch(/does not trust/);
    });

    test('a rotation naming a trusted key as its signer without its signature: refused outright', () => {
      const attacker = newKey();
      // Claims the old key vouched for the attacker's key; the signature is the attacker's own.
      const forged: KeyRotation = { ...signRotation(attacker.secretKey, attacker.publicKey), signedBy: old.publicKey };
      const signed = signManifest(manifest(), attacker.secretKey, [forged]);
      expect(refusal(signed, [old.publicKey])?.message).toMatch(/rotation .* not signed by the key it names/);
    });

    test("a manifest signature does not pass for a rotation's (domain separation)", () => {
      // The old key's signature over some text, moved into a rotation: a different context, so it fails.
      const signed: SignedRelease = signManifest(manifest(), old.secretKey, []);
      const moved: KeyRotation = { publicKey: next.publicKey, signedBy: old.publicKey, signature: signed.signature };
      expect(refusal(signManifest(manifest(), next.secretKey, [moved]), [old.publicKey])?.reason).toBe('signature');
    });
  });
});

describe('compareVersions', () => {
  test('orders by semantic versioning, numbers numerically, a pre-release before its release', () => {
    // semver.org's own example order (section 11), and numeric fields beyond one digit.
    const ordered = [
      '0.9.9',
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.2.0',
      '1.10.0',
      '2.0.0-rc.1',
      '2.0.0',
      '10.0.0',
    ];
    for (let i = 0; i < ordered.length; i++) {
      for (let j = 0; j < ordered.length; j++) {
        expect(compareVersions(ordered[i]!, ordered[j]!), `${ordered[i]} vs ${ordered[j]}`).toBe(Math.sign(i - j));
      }
    }
  });

  test('a pre-release that differs only in letters is ordered by ASCII', () => {
    expect(compareVersions('1.0.0-RC.1', '1.0.0-rc.1')).toBe(-1);
    expect(compareVersions('1.0.0-x-y', '1.0.0-x-y')).toBe(0);
  });
});

describe('refusalFor', () => {
  const box = { version: '1.2.0', arch: 'arm64', databaseSchema: 12 };

  test('a newer release for the same architecture and a schema not older: installable', () => {
    expect(refusalFor(manifest({ version: '1.3.0', schema: { box: 13 } }), box)).toBeUndefined();
    expect(refusalFor(manifest({ version: '1.2.1' }), box)).toBeUndefined();
  });

  test('another architecture: arch', () => {
    expect(refusalFor(manifest({ version: '1.3.0', arch: 'x64' }), box)).toMatchObject({ reason: 'arch' });
  });

  test('the same version, or an older one not signed as a rollback: older', () => {
    expect(refusalFor(manifest({ version: '1.2.0' }), box)).toMatchObject({ reason: 'older' });
    expect(refusalFor(manifest({ version: '1.2.0-rc.1' }), box)).toMatchObject({ reason: 'older' });
    expect(refusalFor(manifest({ version: '1.1.9' }), box)?.message).toMatch(/not signed as a rollback/);
  });

  test('an older release signed as a rollback: installable, unless its schema is older than the database', () => {
    expect(refusalFor(manifest({ version: '1.1.0', rollback: true }), box)).toBeUndefined();
    expect(refusalFor(manifest({ version: '1.1.0', rollback: true, schema: { box: 11 } }), box)).toMatchObject({
      reason: 'schema',
    });
  });

  test('a rollback release signed before the release the box runs (replayed): older', () => {
    const running = { ...box, signedAt: '2026-11-20T10:00:00.000Z' };
    const replayed = manifest({ version: '1.1.0', rollback: true, createdAt: '2026-11-01T10:00:00.000Z' });
    expect(refusalFor(replayed, running)?.message).toMatch(/not a rollback from it/);
    const answer = manifest({ version: '1.1.0', rollback: true, createdAt: '2026-11-21T10:00:00.000Z' });
    expect(refusalFor(answer, running)).toBeUndefined();
    // A newer release is not a rollback: when it was signed does not matter.
    expect(refusalFor(manifest({ version: '1.3.0', createdAt: '2026-01-01T00:00:00.000Z' }), running)).toBeUndefined();
  });

  test('after a forced rollback, nothing signed before it: the release rolled back from is withdrawn', () => {
    const rolledBack = { ...box, version: '1.1.0', signedAfter: '2026-11-21T10:00:00.000Z' };
    const withdrawn = manifest({ version: '1.2.0', createdAt: '2026-11-20T10:00:00.000Z' });
    expect(refusalFor(withdrawn, rolledBack)?.message).toMatch(/withdrew it/);
    const fix = manifest({ version: '1.2.1', createdAt: '2026-11-22T10:00:00.000Z' });
    expect(refusalFor(fix, rolledBack)).toBeUndefined();
  });

  test('a newer release whose schema is older than the database: schema', () => {
    expect(refusalFor(manifest({ version: '1.3.0', schema: { box: 11 } }), box)).toMatchObject({ reason: 'schema' });
  });
});

describe('stableBucket', () => {
  test('0 to 9999, the same for the same device, spread over the range', () => {
    const buckets = Array.from({ length: 2000 }, (_, i) => stableBucket('tenant-a', `device-${i}`));
    for (const b of buckets) {
      expect(Number.isInteger(b)).toBe(true);
      expect(b).toBeGreaterThanOrEqual(0);
      expect(b).toBeLessThan(10_000);
    }
    expect(stableBucket('tenant-a', 'device-7')).toBe(buckets[7]);
    // A 10% rollout takes about a tenth of the devices (binomial: 200 expected, sd ~13).
    const inTenPercent = buckets.filter((b) => b < 1000).length;
    expect(inTenPercent).toBeGreaterThan(140);
    expect(inTenPercent).toBeLessThan(260);
    // Every quarter of the range gets some.
    for (let q = 0; q < 4; q++) expect(buckets.some((b) => b >= q * 2500 && b < (q + 1) * 2500)).toBe(true);
  });

  test('depends on the tenant too, and is fixed across releases (a known value)', () => {
    expect(stableBucket('tenant-a', 'device-1')).not.toBe(stableBucket('tenant-b', 'device-1'));
    // sha256("tenant/device")'s first four bytes, big-endian, mod 10000: a change would reshuffle every fleet's
    // rollouts, so the values are written out.
    expect(stableBucket('t', 'd')).toBe(8238);
    expect(stableBucket('tenant-a', 'device-1')).toBe(5946);
  });
});
