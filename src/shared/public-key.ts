/**
 * Ed25519 public keys that verify forgeries: small-order points. With A and R of small order and S = 0, node's
 * verify accepts about one message in four, with no secret key at all (a hostile device enrolled one; tested in test/central-hardening.test.ts). A key from
 * a real key pair is never one of them, so enrolment refuses them.
 *
 * The list is libsodium's `ge25519_has_small_order` blocklist (src/libsodium/crypto_core/ed25519/ref10/
 * ed25519_ref10.c, before commit 0f767c7d replaced the table by the same test done on the decoded point):
 * every encoding of a point of order 1, 2, 4 or 8, canonical or not, compared with bit 255 (the sign of x)
 * ignored, as libsodium does.
 */
const SMALL_ORDER = [
  '0000000000000000000000000000000000000000000000000000000000000000', // 0 (order 4)
  '0100000000000000000000000000000000000000000000000000000000000000', // 1 (order 1)
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', // order 8
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', // order 8
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // p - 1 (order 2)
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // p (= 0, order 4)
  'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // p + 1 (= 1, order 1)
].map((hex) => Buffer.from(hex, 'hex'));

/** True for a 32-byte key that is one of the small-order encodings (bit 255 ignored). */
export function hasSmallOrder(key: Uint8Array): boolean {
  if (key.length !== 32) return false;
  return SMALL_ORDER.some((bad) => {
    for (let i = 0; i < 31; i++) if (key[i] !== bad[i]) return false;
    return (key[31]! & 0x7f) === bad[31];
  });
}

/**
 * True when y, the low 255 bits, is below p = 2^255 - 19 (libsodium's `ge25519_is_canonical`): a key pair
 * never yields another encoding, and a non-canonical one could be a second name for an enrolled key.
 */
export function isCanonical(key: Uint8Array): boolean {
  if (key.length !== 32) return false;
  if ((key[31]! & 0x7f) !== 0x7f) return true;
  for (let i = 30; i > 0; i--) if (key[i] !== 0xff) return true;
  return key[0]! < 0xed;
}

/** Whether `key` may be enrolled: 32 bytes, canonical, not of small order. */
export const isAcceptableKey = (key: Uint8Array): boolean =>
  key.length === 32 && isCanonical(key) && !hasSmallOrder(key);
