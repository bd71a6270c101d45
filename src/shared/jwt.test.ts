import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import { describe, expect, test } from 'vitest';
import { type Claims, loadOrCreateKey, signJwt, verifyJwt } from './jwt.js';

const claims = (exp: number): Claims => ({
  UUID: 'u',
  TENANT: 't',
  scope: 'read',
  jti: 'j',
  iat: exp - 60,
  exp,
});

describe('jwt', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vb-jwt-'));
  const key = loadOrCreateKey(dir);

  test('the key is kept with mode 0600 and reloaded on the next start', () => {
    expect(statSync(join(dir, 'jwt-ed25519.json')).mode & 0o777).toBe(0o600);
    expect(loadOrCreateKey(dir).kid).toBe(key.kid);
  });

  test('a signed token verifies until it expires', () => {
    const token = signJwt(key, claims(1000));
    expect(verifyJwt(key, token, 999)).toEqual({ ok: true, claims: claims(1000) });
    expect(verifyJwt(key, token, 1000)).toEqual({ ok: false, reason: 'token expired' });
  });

  test('node:crypto signs with the key tweetnacl made, byte for byte what tweetnacl signs (a key from before reloads)', () => {
    const token = signJwt(key, claims(1000));
    const [h, p, sig] = token.split('.') as [string, string, string];
    expect(Buffer.from(sig, 'base64url')).toEqual(
      Buffer.from(nacl.sign.detached(Buffer.from(`${h}.${p}`), key.secretKey)),
    );
    const reloaded = loadOrCreateKey(dir);
    expect(signJwt(reloaded, claims(1000))).toBe(token);
  });

  test('node:crypto verification agrees with tweetnacl signatures', () => {
    const token = signJwt(key, claims(1000));
    const [h, p, sig] = token.split('.') as [string, string, string];
    expect(nacl.sign.detached.verify(Buffer.from(`${h}.${p}`), Buffer.from(sig, 'base64url'), key.publicKey)).toBe(
      true,
    );
    expect(verifyJwt(key, token, 1).ok).toBe(true);
  });

  test('forged payloads, other keys and garbage are refused', () => {
    const token = signJwt(key, claims(1000));
    const [h, , s] = token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims(1000), scope: 'read write' })).toString('base64url')}.${s}`;
    expect(verifyJwt(key, forged, 1)).toMatchObject({ ok: false, reason: 'bad signature' });
    const other = loadOrCreateKey(mkdtempSync(join(tmpdir(), 'vb-jwt-')));
    expect(verifyJwt(other, token, 1)).toMatchObject({ ok: false });
    expect(verifyJwt(key, 'a.b', 1)).toMatchObject({ ok: false, reason: 'malformed token' });
    expect(verifyJwt(key, 'a.b.c', 1)).toMatchObject({ ok: false });
  });

  test('a header that is JSON but not an object is refused, never thrown', () => {
    const [, p, s] = signJwt(key, claims(1000)).split('.') as [string, string, string];
    const b64 = (json: string) => Buffer.from(json).toString('base64url');
    for (const header of ['null', '1', '"EdDSA"', '[]', 'true']) {
      expect(verifyJwt(key, `${b64(header)}.${p}.${s}`, 1)).toMatchObject({ ok: false });
    }
  });
});
