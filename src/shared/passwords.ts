import { randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';

/** scrypt parameters: N=2^14 keeps a staff login near 50 ms on a Raspberry Pi 4. */
const N = 16_384;
const R = 8;
const P = 1;
const KEY_LEN = 32;

/** `scrypt$N$r$p$salt$hash`, base64 parts: self-describing so parameters can change later. */
export function hashSecret(secret: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(secret, salt, KEY_LEN, { N, r: R, p: P });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** Verifies off the event loop (libuv's thread pool). */
export function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return Promise.resolve(false);
  const expected = Buffer.from(hash, 'base64');
  return new Promise((resolve) => {
    scrypt(
      secret,
      Buffer.from(salt, 'base64'),
      expected.length,
      { N: Number(n), r: Number(r), p: Number(p) },
      (err, derived) => resolve(!err && timingSafeEqual(derived, expected)),
    );
  });
}
