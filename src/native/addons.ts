import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { getAsset, getRawAsset, isSea } from 'node:sea';
import { chooseCacheDir } from './cache-dir.js';
import { AddonExtractError, type AddonEntry, ensureAddonFile } from './extract.js';

/**
 * Native addons (`.node` files) of the box.
 *
 * From node_modules (`node dist/main.cjs`, tests) the packages load their addons themselves and
 * `bundledAddon()` returns undefined. Inside the single binary (Node SEA) there is no node_modules and
 * `require` only reaches built-in modules, so scripts/build-sea.mjs carries each addon as a gzipped SEA
 * asset with a manifest (`addons.json`), and this module writes it to a cache directory by content hash
 * at first start (cache-dir.ts, extract.ts) and loads it with `process.dlopen`.
 *
 * Who asks: src/db/open.ts hands better-sqlite3 its addon through the `nativeBinding` option; src/native/uws.ts
 * loads uWebSockets.js's; for serialport's node-gyp-build the SEA bundle redirects the package to a shim that
 * calls `loadBundledAddon()`.
 */

/** SEA asset key of the manifest written by scripts/build-sea.mjs. */
export const MANIFEST_ASSET = 'addons.json';

export type AddonManifest = Record<string, AddonEntry>;

const loaded = new Map<string, object>();
const files = new Map<string, string>();
let manifest: AddonManifest | undefined;
let cacheDir: string | undefined;

/** True inside the single binary. */
export function insideSingleBinary(): boolean {
  return isSea();
}

/** The addon carried in the single binary, loaded; undefined when running from node_modules. */
export function bundledAddon(name: string): object | undefined {
  return insideSingleBinary() ? loadBundledAddon(name) : undefined;
}

/** Extracts (first start only) and loads addon `name` from the single binary; later calls reuse it. */
export function loadBundledAddon(name: string): object {
  const done = loaded.get(name);
  if (done) return done;
  const entry = readManifest()[name];
  if (!entry) throw new AddonExtractError(`native addon ${name} is not in this binary (see scripts/build-sea.mjs)`);
  cacheDir ??= chooseCacheDir();
  const file = ensureAddonFile(cacheDir, name, entry, () => getRawAsset(entry.asset) as ArrayBuffer);
  const exports = loadAddonFile(name, file);
  loaded.set(name, exports);
  files.set(name, file);
  return exports;
}

/** Loads the `.node` file of addon `name` (a file in the addon cache); AddonExtractError when it cannot. */
export function loadAddonFile(name: string, file: string): object {
  const mod = { exports: {} as object };
  try {
    // RTLD_NOW: a missing symbol (an addon built for another Node, a newer glibc) fails here, not in the middle
    // of a request.
    process.dlopen(mod, file, constants.dlopen.RTLD_NOW);
  } catch (err) {
    throw new AddonExtractError(`cannot load native addon ${name} from ${file}: ${(err as Error).message}`);
  }
  return mod.exports;
}

/**
 * The file better-sqlite3's addon is loaded from: inside the single binary the extracted one, else the package's
 * own build. A worker thread with a connection of its own loads it from there (src/db/checkpointer.ts).
 */
export function betterSqliteAddonFile(): string {
  if (insideSingleBinary()) {
    loadBundledAddon('better-sqlite3');
    return files.get('better-sqlite3')!;
  }
  const dir = dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
  // The package's own choice: a build from source when there is one (npm rebuild --build-from-source), else the
  // prebuilt addon it ships for this machine.
  const built = join(dir, 'build', 'Release', 'better_sqlite3.node');
  return existsSync(built) ? built : join(dir, 'prebuilds', `${process.platform}-${process.arch}.node`);
}

function readManifest(): AddonManifest {
  manifest ??= JSON.parse(getAsset(MANIFEST_ASSET, 'utf8')) as AddonManifest;
  return manifest;
}

/**
 * Options for `new Database()` from better-sqlite3: inside the single binary, the loaded addon. better-sqlite3
 * accepts an addon object as `nativeBinding` (a path would go through `require`, which cannot load files
 * there); its typings only know a path, hence the cast.
 */
export function betterSqliteOptions(): { nativeBinding?: string } {
  const addon = bundledAddon('better-sqlite3');
  return addon ? { nativeBinding: addon as unknown as string } : {};
}
