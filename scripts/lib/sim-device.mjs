// test/support/sim-device.ts's SimDevice (a box speaking the real sync protocol, with no box behind it) for the
// benchmarks, bundled into dist/ (inside the checkout, so its imports resolve from node_modules), with the sync
// protocol's request signing for requests a benchmark makes of its own.
import { join } from 'node:path';
import { build } from 'esbuild';
import { root } from './run.mjs';

/**
 * The TypeScript sources a benchmark needs, bundled as dist/NAME.mjs: `exports` are lines of the bundle's entry
 * (`export { X } from './src/...ts';`), `external` the packages left to node_modules. Returns the file's path.
 */
export async function bundleSources(name, exports, external) {
  const outfile = join(root, `dist/${name}.mjs`);
  await build({
    stdin: { contents: exports.join('\n'), resolveDir: root, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile,
    logLevel: 'warning',
    external,
  });
  return outfile;
}

/** `{SimDevice, requestSigningText, signDetached}`, bundled as dist/NAME.mjs. */
export async function loadSimDevice(name = 'bench-sim-device') {
  const outfile = await bundleSources(
    name,
    [
      "export { SimDevice } from './test/support/sim-device.ts';",
      "export { requestSigningText, signDetached } from './src/shared/sync-protocol.ts';",
    ],
    ['tweetnacl'],
  );
  return import(outfile);
}
