/**
 * Releases of the box's program (docs/operations.md "Updating boxes"): the signed manifest headquarters makes
 * offline with `venue-box release sign`, the key rotations, the target a central offers a box, and the update
 * state a box reports in its hello. The box, the central and the release commands import this file; a box trusts
 * the release keys it was flashed or provisioned with (and their rotations), never the central.
 */
import { createHash, verify } from 'node:crypto';
import { signDetached, verifyKeyOf } from './ed25519.js';
import { isAcceptableKey } from './public-key.js';
import {
  type KeyRotation,
  RELEASE_CHECKS,
  type ReleaseManifest,
  type SignedRelease,
  type UpdateReason,
} from './release-schemas.js';

// ------------------------------------------------------------------------------------------ signatures

// Domain separation: a signature over a manifest can never pass for a rotation, a sync batch or a token.
const MANIFEST_CONTEXT = 'venue-box release manifest v1\n';
const ROTATION_CONTEXT = 'venue-box release key rotation v1\n';

const bytesOf = (context: string, text: string) => Buffer.from(context + text, 'utf8');
const keyBytes = (b64: string) => Buffer.from(b64, 'base64');

function verifies(context: string, text: string, signature: string, publicKey: string): boolean {
  const key = keyBytes(publicKey);
  if (key.length !== 32 || !isAcceptableKey(key)) return false;
  const sig = Buffer.from(signature, 'base64');
  return sig.length === 64 && verify(null, bytesOf(context, text), verifyKeyOf(key), sig);
}

/** A release key's public half, base64, from its 64-byte tweetnacl secret key. */
export const publicKeyOf = (secretKey: Uint8Array): string => Buffer.from(secretKey.subarray(32)).toString('base64');

export function signManifest(manifest: ReleaseManifest, secretKey: Uint8Array, keys: KeyRotation[]): SignedRelease {
  const text = JSON.stringify(manifest);
  const signature = Buffer.from(signDetached(bytesOf(MANIFEST_CONTEXT, text), secretKey)).toString('base64');
  return { manifest: text, publicKey: publicKeyOf(secretKey), signature, keys };
}

/** The old key vouches for the new one. */
export function signRotation(oldSecretKey: Uint8Array, newPublicKey: string): KeyRotation {
  const signature = Buffer.from(signDetached(bytesOf(ROTATION_CONTEXT, newPublicKey), oldSecretKey)).toString('base64');
  return { publicKey: newPublicKey, signedBy: publicKeyOf(oldSecretKey), signature };
}

export class ReleaseRefused extends Error {
  constructor(
    readonly reason: UpdateReason,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The manifest of a signed release, when a trusted key signed it. A rotation signed by a trusted key makes its
 * key trusted and retires the one that signed it (rotations are followed in order); `trusted` is then the set
 * the box keeps for the next release. Throws ReleaseRefused('signature') otherwise.
 */
export function verifyRelease(
  signed: unknown,
  trustedKeys: readonly string[],
): { manifest: ReleaseManifest; trusted: string[] } {
  if (!RELEASE_CHECKS.signed.Check(signed)) throw new ReleaseRefused('signature', 'not a signed release file');
  let trusted = [...new Set(trustedKeys)];
  for (const rotation of signed.keys) {
    if (trusted.includes(rotation.publicKey)) continue;
    if (!trusted.includes(rotation.signedBy)) continue;
    if (!verifies(ROTATION_CONTEXT, rotation.publicKey, rotation.signature, rotation.signedBy)) {
      throw new ReleaseRefused('signature', 'a key rotation in the release is not signed by the key it names');
    }
    trusted = [...trusted.filter((k) => k !== rotation.signedBy), rotation.publicKey];
  }
  if (!trusted.includes(signed.publicKey)) {
    throw new ReleaseRefused('signature', 'the release is signed by a key this box does not trust');
  }
  if (!verifies(MANIFEST_CONTEXT, signed.manifest, signed.signature, signed.publicKey)) {
    throw new ReleaseRefused('signature', "the manifest's signature does not verify");
  }
  const manifest = readManifest(signed.manifest);
  if (!manifest) {
    throw new ReleaseRefused('signature', 'the signed manifest is not a release manifest of this program');
  }
  return { manifest, trusted };
}

/** A manifest's text as a release manifest (its signature is another matter), or undefined when it is not one. */
export function readManifest(text: string): ReleaseManifest | undefined {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    return undefined;
  }
  return RELEASE_CHECKS.manifest.Check(manifest) && !Number.isNaN(Date.parse(manifest.createdAt))
    ? manifest
    : undefined;
}

// ------------------------------------------------------------------------------------------ versions

/** -1, 0 or 1 as semantic versioning orders them (a pre-release sorts before its release). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core, pre] = v.split(/-(.*)/s, 2) as [string, string | undefined];
    return { nums: core.split('.').map(Number), pre: pre === undefined ? [] : pre.split('.') };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (x.pre.length === 0 || y.pre.length === 0) return Math.sign(y.pre.length - x.pre.length);
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i];
    const q = y.pre[i];
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn && Number(p) !== Number(q)) return Math.sign(Number(p) - Number(q));
    if (pn !== qn) return pn ? -1 : 1;
    if (p !== q) return p < q ? -1 : 1;
  }
  return 0;
}

/**
 * Why this box must not install the release, or undefined: another architecture, not newer than what runs
 * (unless headquarters signed it as a rollback release after the release the box runs), or a schema older than
 * the box's database.
 */
export function refusalFor(
  manifest: ReleaseManifest,
  box: {
    version: string;
    arch: string;
    databaseSchema: number;
    /** When the manifest of the release the box runs was signed (absent: a release put in place by hand). */
    signedAt?: string;
    /**
     * After a forced rollback: when the rollback release was signed. Nothing signed before it is installed again
     * (the release rolled back from included), only what headquarters signs after.
     */
    signedAfter?: string;
  },
): ReleaseRefused | undefined {
  if (manifest.arch !== box.arch) {
    return new ReleaseRefused('arch', `the release is for ${manifest.arch}; this box is ${box.arch}`);
  }
  const order = compareVersions(manifest.version, box.version);
  if (order === 0) return new ReleaseRefused('older', `${manifest.version} is the version this box runs`);
  if (order < 0 && !manifest.rollback) {
    return new ReleaseRefused(
      'older',
      `${manifest.version} is older than ${box.version} and not signed as a rollback release`,
    );
  }
  // A rollback release answers the release it rolls back from, so it is signed after it: an older one replayed by a
  // broken-into central (to bring back a release with a known hole) is refused.
  if (order < 0 && box.signedAt !== undefined && Date.parse(manifest.createdAt) <= Date.parse(box.signedAt)) {
    return new ReleaseRefused(
      'older',
      `${manifest.version} was signed as a rollback release before ${box.version} was signed: not a rollback from it`,
    );
  }
  if (box.signedAfter !== undefined && Date.parse(manifest.createdAt) < Date.parse(box.signedAfter)) {
    return new ReleaseRefused(
      'older',
      `${manifest.version} was signed before the rollback this box installed: headquarters withdrew it`,
    );
  }
  if (manifest.schema.box < box.databaseSchema) {
    return new ReleaseRefused(
      'schema',
      `${manifest.version} opens databases up to schema ${manifest.schema.box}; this box's is at ${box.databaseSchema}`,
    );
  }
  return undefined;
}

/** A device's place in the fleet, 0 to 9999, the same for every rollout: a percentage picks the same boxes. */
export function stableBucket(tenantId: string, deviceId: string): number {
  return createHash('sha256').update(`${tenantId}/${deviceId}`).digest().readUInt32BE(0) % 10_000;
}
