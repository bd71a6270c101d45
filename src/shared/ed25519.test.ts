import nacl from 'tweetnacl';
import { expect, test } from 'vitest';
import { signDetached } from './ed25519.js';
import { verifyDetached } from './sync-protocol.js';

test("node:crypto signs with tweetnacl's keys the same bytes tweetnacl does, for every key and message", () => {
  for (let k = 0; k < 5; k++) {
    const pair = nacl.sign.keyPair();
    for (const size of [0, 1, 63, 64, 300, 70_000]) {
      const message = nacl.randomBytes(size);
      const signature = signDetached(message, pair.secretKey);
      expect(Buffer.from(signature).toString('hex')).toBe(
        Buffer.from(nacl.sign.detached(message, pair.secretKey)).toString('hex'),
      );
      expect(nacl.sign.detached.verify(message, signature, pair.publicKey)).toBe(true);
      expect(verifyDetached(message, signature, pair.publicKey)).toBe(true);
    }
  }
});

test('each key signs as itself: a key made once and kept is not confused with another', () => {
  const a = nacl.sign.keyPair();
  const b = nacl.sign.keyPair();
  const message = Buffer.from('POST /sync/batch\ntenant\ndevice\nabc', 'utf8');
  const byA = signDetached(message, a.secretKey);
  const byB = signDetached(message, b.secretKey);
  expect(Buffer.from(byA).equals(Buffer.from(byB))).toBe(false);
  expect(verifyDetached(message, byA, a.publicKey)).toBe(true);
  expect(verifyDetached(message, byA, b.publicKey)).toBe(false);
  // A copy of a's key (another array) signs as a too.
  expect(Buffer.from(signDetached(message, new Uint8Array(a.secretKey))).equals(Buffer.from(byA))).toBe(true);
});

test("a secret key of another length than tweetnacl's 64 bytes is refused, as tweetnacl refuses it", () => {
  const pair = nacl.sign.keyPair();
  expect(() => nacl.sign.detached(Buffer.from('x'), pair.secretKey.subarray(0, 32))).toThrow('bad secret key size');
  expect(() => signDetached(Buffer.from('x'), pair.secretKey.subarray(0, 32))).toThrow('bad secret key size');
});
