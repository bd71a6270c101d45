import { createHash, type KeyObject, sign, verify } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import { signKeyOf, verifyKeyOf } from './ed25519.js';
import { unauthorized } from './errors.js';

/** Access-token claims (docs/api.md "The API"). */
export interface Claims {
  UUID: string;
  TENANT: string;
  scope: string;
  jti: string;
  iat: number;
  exp: number;
  /**
   * The issuer (docs/api.md "OAuth discovery"): the tenant's issuer URL at the origin the token was asked at, for
   * verifiers that check `iss` (RFC 9068). Absent on tokens issued before, and where the Host was not a sane one.
   */
  iss?: string;
  /** The user again (`UUID`), as `sub`: where standard verifiers and gateways look for the subject. */
  sub?: string;
}

export interface SigningKey {
  kid: string;
  secretKey: Uint8Array;
  publicKey: Uint8Array;
  /** The same public key for node:crypto, which verifies Ed25519 natively (~50x faster than pure JS). */
  verifyKey: KeyObject;
  /** The same private key for node:crypto, which signs natively too (tweetnacl took ~3.5 ms a token). */
  signKey: KeyObject;
}

const signingKey = (kid: string, pair: nacl.SignKeyPair): SigningKey => ({
  kid,
  secretKey: pair.secretKey,
  publicKey: pair.publicKey,
  verifyKey: verifyKeyOf(pair.publicKey),
  signKey: signKeyOf(pair.secretKey),
});

export const KEY_FILE = 'jwt-ed25519.json';

/** A signing key from its stored secret (64 bytes: tweetnacl's seed and public key). */
export const signingKeyFromSecret = (kid: string, secretKey: Uint8Array): SigningKey =>
  signingKey(kid, nacl.sign.keyPair.fromSecretKey(secretKey));

/** A new key; its id is the first 16 hex digits of its public key's sha256. */
export function newSigningKey(): SigningKey {
  const pair = nacl.sign.keyPair();
  return signingKey(createHash('sha256').update(pair.publicKey).digest('hex').slice(0, 16), pair);
}

/** The key of `dataDir`'s key file, or undefined when there is none. */
export function readKeyFile(dataDir: string): SigningKey | undefined {
  const file = join(dataDir, KEY_FILE);
  if (!existsSync(file)) return undefined;
  const stored = JSON.parse(readFileSync(file, 'utf8')) as { kid: string; secretKey: string };
  return signingKeyFromSecret(stored.kid, Buffer.from(stored.secretKey, 'base64'));
}

/** Loads the box's Ed25519 signing key, generating it (mode 0600, written atomically) on first start. */
export function loadOrCreateKey(dataDir: string): SigningKey {
  const stored = readKeyFile(dataDir);
  if (stored) return stored;
  const key = newSigningKey();
  const file = join(dataDir, KEY_FILE);
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify({ kid: key.kid, secretKey: Buffer.from(key.secretKey).toString('base64') }), {
    mode: 0o600,
  });
  renameSync(tmp, file);
  return key;
}

const b64url = (data: Uint8Array | string): string => Buffer.from(data).toString('base64url');

export function signJwt(key: SigningKey, claims: Claims): string {
  const header = b64url(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', kid: key.kid }));
  const payload = b64url(JSON.stringify(claims));
  // Ed25519 signatures are deterministic (RFC 8032): node:crypto gives tweetnacl's bytes, natively.
  const signature = sign(null, Buffer.from(`${header}.${payload}`), key.signKey);
  return `${header}.${payload}.${b64url(signature)}`;
}

export type VerifyResult = { ok: true; claims: Claims } | { ok: false; reason: string };

/** Checks shape, algorithm, key id, signature and expiry. Never throws. */
export function verifyJwt(key: SigningKey, token: string, nowSeconds: number): VerifyResult {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'malformed token' };
  const [header, payload, signature] = parts as [string, string, string];
  let head: { alg?: unknown; kid?: unknown };
  let claims: Claims;
  try {
    head = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as typeof head;
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
  } catch {
    return { ok: false, reason: 'malformed token' };
  }
  // JSON.parse also gives null, numbers and strings: `null.alg` would throw (a 500 for a forged header).
  if (typeof head !== 'object' || head === null) return { ok: false, reason: 'malformed token' };
  if (head.alg !== 'EdDSA' || head.kid !== key.kid) return { ok: false, reason: 'unknown signing key' };
  const sig = Buffer.from(signature, 'base64url');
  if (sig.length !== nacl.sign.signatureLength) return { ok: false, reason: 'bad signature' };
  if (!verify(null, Buffer.from(`${header}.${payload}`), key.verifyKey, sig)) {
    return { ok: false, reason: 'bad signature' };
  }
  if (typeof claims !== 'object' || claims === null || typeof claims.exp !== 'number') {
    return { ok: false, reason: 'malformed claims' };
  }
  if (typeof claims.UUID !== 'string' || typeof claims.TENANT !== 'string' || typeof claims.scope !== 'string') {
    return { ok: false, reason: 'malformed claims' };
  }
  if (claims.exp <= nowSeconds) return { ok: false, reason: 'token expired' };
  return { ok: true, claims };
}

/**
 * Checks bearer tokens for the box and the central alike; throws a 401. Every request carries a token and a
 * client reuses one for an hour, so a verified token is remembered by its exact text (which the signature
 * covers) and the Ed25519 check runs once per token, not per request. Expiry is checked on every use.
 */
export function createBearerCheck(key: SigningKey, now: () => number) {
  const verified = new Map<string, Claims>();
  return (token: string | undefined): Claims => {
    // RFC 6750 3.1: a request with no credentials gets the bare challenge, without an error code.
    if (!token) throw unauthorized('missing bearer token').withHeaders({ 'WWW-Authenticate': BEARER_CHALLENGE });
    const nowSeconds = Math.floor(now() / 1000);
    let claims = verified.get(token);
    if (!claims || claims.exp <= nowSeconds) {
      verified.delete(token);
      const result = verifyJwt(key, token, nowSeconds);
      if (!result.ok) throw unauthorized(result.reason);
      claims = result.claims;
      if (verified.size >= MAX_VERIFIED_TOKENS) verified.clear();
      verified.set(token, claims);
    }
    return claims;
  };
}

const MAX_VERIFIED_TOKENS = 10_000;

/** The challenge of a request that sent no bearer token (docs/api.md "Errors"). */
export const BEARER_CHALLENGE = 'Bearer realm="venue-box"';

/** An Ed25519 JSON Web Key (RFC 8037) of the key's public half: what a JWKS lists (docs/api.md "OAuth discovery"). */
export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

export const publicJwkOf = (key: Pick<SigningKey, 'kid' | 'publicKey'>): PublicJwk => ({
  kty: 'OKP',
  crv: 'Ed25519',
  x: b64url(key.publicKey),
  kid: key.kid,
  alg: 'EdDSA',
  use: 'sig',
});
