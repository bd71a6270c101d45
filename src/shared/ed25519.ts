import { createPrivateKey, createPublicKey, type KeyObject, sign } from 'node:crypto';

/**
 * tweetnacl's Ed25519 keys for node:crypto, which signs and verifies natively. tweetnacl makes the keys (the
 * token key, the devices' keys); Ed25519 signatures are deterministic (RFC 8032), so node:crypto's are the same
 * bytes tweetnacl's `sign.detached` gives, about 20 µs instead of 2.8 ms on this machine (pure JavaScript, more
 * on a Raspberry Pi, on the event loop of whoever calls it).
 */

// DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the 32 raw key bytes follow it.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
// DER prefix of an Ed25519 PKCS#8 private key (RFC 8410); the 32-byte seed (tweetnacl's secretKey[0..32]) follows.
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A tweetnacl public key (32 bytes) for node:crypto's `verify`. */
export const verifyKeyOf = (publicKey: Uint8Array): KeyObject =>
  createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });

/** A tweetnacl secret key (64 bytes: the seed, then the public key) for node:crypto's `sign`. */
export const signKeyOf = (secretKey: Uint8Array): KeyObject =>
  createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, secretKey.subarray(0, 32)]),
    format: 'der',
    type: 'pkcs8',
  });

/**
 * Each secret key's KeyObject, made once (0.3 ms): the callers keep their key's array for as long as they sign,
 * and never write into it (a key is replaced by another array: a device enrolled again, a restore).
 */
const signKeys = new WeakMap<Uint8Array, KeyObject>();

/** The 64-byte Ed25519 signature of `message` by a tweetnacl secret key: the bytes of nacl.sign.detached. */
export function signDetached(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  // As tweetnacl: a key of another length is a mistake of the caller, never signed with.
  if (secretKey.length !== 64) throw new Error('bad secret key size');
  let key = signKeys.get(secretKey);
  if (!key) {
    key = signKeyOf(secretKey);
    signKeys.set(secretKey, key);
  }
  return new Uint8Array(sign(null, message, key));
}
