// Builds a web app to static files: one JS and one CSS bundle with content hashes in their names under assets/,
// and index.html naming them. Two apps: the box's screens (web/main.tsx, README "Screens") and the central's
// headquarters console (web/hq/main.tsx, README "Headquarters console"), sharing web/'s code. Preact's JSX goes through esbuild (no
// Babel, nothing fetched at run time). Used by scripts/build.mjs (dist/web) and scripts/build-sea.mjs (the
// single binary's assets).
import { readdirSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { build } from 'esbuild';

/** The apps: entry point and page title. */
export const WEB_APPS = {
  screens: { entry: 'web/main.tsx', title: 'venue-box' },
  hq: { entry: 'web/hq/main.tsx', title: 'venue-box: centrala' },
};

/** Writes the web app into `outDir` (emptied first); returns the file names relative to it. */
export async function buildWeb(root, outDir, app = WEB_APPS.screens) {
  const out = resolve(root, outDir);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: [app.entry],
    outdir: out,
    entryNames: 'assets/[name]-[hash]',
    assetNames: 'assets/[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    // Tablets of the last five years: Chrome/WebView 87, Safari 14.
    target: ['chrome87', 'safari14', 'firefox90'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: 'web/tsconfig.json',
    minify: true,
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) =>
    relative(out, resolve(root, file)).split(sep).join('/'),
  );
  const js = outputs.find((f) => f.endsWith('.js'));
  const css = outputs.find((f) => f.endsWith('.css'));
  writeFileSync(join(out, 'index.html'), indexHtml(js, css, app.title));
  return listFiles(out);
}

function indexHtml(js, css, title) {
  // The icon is inline, so a browser's /favicon.ico request never reaches the API's 404.
  const icon =
    "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='3' fill='%23b3261e'/%3E%3C/svg%3E";
  return `<!doctype html>
<html lang="pl">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="theme-color" content="#1d1b20">
<title>${title}</title>
<link rel="icon" href="${icon}">
${css ? `<link rel="stylesheet" href="/${css}">` : ''}
<script type="module" src="/${js}"></script>
</head>
<body>
<div id="app"><noscript>${title}: JavaScript is needed here.</noscript></div>
</body>
</html>
`;
}

function listFiles(dir, base = dir) {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? listFiles(path, base) : [relative(base, path).split(sep).join('/')];
    })
    .filter((f) => basename(f) !== '.DS_Store');
}
