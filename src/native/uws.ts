import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as Uws from 'uWebSockets.js';
import { bundledAddon, loadAddonFile } from './addons.js';
import { chooseCacheDir } from './cache-dir.js';
import { AddonExtractError, ensureAddonFile } from './extract.js';
import { withoutGlibc238 } from './glibc-compat.js';

export type UwsModule = typeof Uws;

let loaded: UwsModule | undefined;

/**
 * uWebSockets.js, the box's and the central's HTTP and WebSocket server (docs/architecture.md "Runtime and
 * native addons"). Every caller takes it from here, never from the package: its Node 24 addon is loaded with
 * its glibc 2.38 imports pointed at the older functions (glibc-compat.ts), so it loads on glibc 2.36 too, and
 * the same way on every machine. Inside the single binary the addon was made so at build time
 * (scripts/build-sea.mjs); from node_modules it is made so here and written to the addon cache by content hash.
 *
 * Also turns off the `uWebSockets: 20` header uWS writes on every response by default: it told every client
 * the server's make and version for nothing.
 */
export function uws(): UwsModule {
  if (loaded) return loaded;
  const mod = (bundledAddon('uws') as UwsModule | undefined) ?? loadFromPackage();
  (mod as UwsModule & { _cfg(key: string): void })._cfg('silent');
  loaded = mod;
  return mod;
}

function loadFromPackage(): UwsModule {
  const require = createRequire(import.meta.url);
  const dir = dirname(require.resolve('uWebSockets.js/package.json'));
  const name = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const file = join(dir, name);
  let image: Uint8Array;
  try {
    image = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new AddonExtractError(
      `uWebSockets.js has no ${name} for this Node and machine (${code}): Node 24 on linux x64 or arm64 is needed`,
    );
  }
  let fixed: Uint8Array;
  try {
    fixed = withoutGlibc238(image).image;
  } catch (err) {
    // GlibcCompatError: what renaming cannot fix; anything else: a file too damaged to read.
    throw new AddonExtractError(`cannot load ${file}: ${(err as Error).message}`);
  }
  if (fixed === image) return require(file) as UwsModule;
  const sha256 = createHash('sha256').update(fixed).digest('hex');
  const path = ensureAddonFile(
    chooseCacheDir(),
    'uws',
    { asset: name, sha256, bytes: fixed.byteLength, gzip: false },
    () => fixed.buffer.slice(fixed.byteOffset, fixed.byteOffset + fixed.byteLength) as ArrayBuffer,
  );
  return loadAddonFile('uws', path) as UwsModule;
}
