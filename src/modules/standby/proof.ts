import { randomBytes, verify } from 'node:crypto';
import { signDetached, verifyKeyOf } from '../../shared/ed25519.js';

/**
 * How each box of a pair proves itself to the other: an Ed25519 signature, by the key it registered at pairing,
 * of the other's fresh random challenge and of its own box id, so a recorded answer is worth nothing later and
 * an answer for one box cannot be passed off for the other. No clock is involved: the boxes' clocks may differ
 * by hours.
 */
export const newNonce = (): string => randomBytes(24).toString('base64url');

/**
 * What a signature is for, signed with it: an answer on `/standby-api/state` (which anyone on the LAN may ask
 * for, with a nonce of their choosing) can never pass for a standby's AUTH or a primary's WELCOME on the stream,
 * nor one of those for the other.
 */
export type ProofPurpose = 'auth' | 'welcome' | 'state';

/** `claim`: what else the signature vouches for (a box's role and term on `/standby-api/state`). */
const message = (purpose: ProofPurpose, nonce: string, boxId: string, claim: string): Buffer =>
  Buffer.from(`venue-box standby ${purpose} ${nonce} ${boxId} ${claim}`);

export const prove = (purpose: ProofPurpose, nonce: string, boxId: string, secretKey: Uint8Array, claim = ''): string =>
  Buffer.from(signDetached(message(purpose, nonce, boxId, claim), secretKey)).toString('base64url');

export function verifyProof(
  purpose: ProofPurpose,
  nonce: string,
  boxId: string,
  signature: string,
  publicKeyBase64: string,
  claim = '',
): boolean {
  try {
    const key = verifyKeyOf(Buffer.from(publicKeyBase64, 'base64'));
    return verify(null, message(purpose, nonce, boxId, claim), key, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}
