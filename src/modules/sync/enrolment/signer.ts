import { signDetached } from '../../../shared/sync-protocol.js';

/** Signs bytes with the device key; resolves with the 64-byte Ed25519 signature. */
export type Signer = (message: Uint8Array) => Promise<Uint8Array>;

/**
 * The device's signer: node:crypto's native Ed25519 on the event loop, about 20 µs a signature
 * (src/shared/ed25519.ts). It replaced a worker thread running tweetnacl (2.8 ms a signature here), whose own
 * V8 heap held 9-16 MB of an enrolled box's memory for as long as it ran (docs/performance.md "Idle memory").
 */
export const deviceSigner =
  (secretKey: Uint8Array): Signer =>
  async (message) =>
    signDetached(message, secretKey);
