/**
 * The signer's worker thread: tweetnacl's Ed25519 signing is pure JavaScript and takes milliseconds (more on
 * a Raspberry Pi), so it runs here, never on the event loop that serves orders. Bundled on its own by
 * scripts/build.mjs and started from source text (src/modules/sync/signer.ts).
 */
import { parentPort } from 'node:worker_threads';
import { signDetached } from '../../shared/sync-protocol.js';

parentPort!.on('message', (m: { id: number; message: Uint8Array; secretKey: Uint8Array }) => {
  parentPort!.postMessage({ id: m.id, signature: signDetached(m.message, m.secretKey) });
});
