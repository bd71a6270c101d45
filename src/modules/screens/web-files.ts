import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { getAsset, isSea } from 'node:sea';

/**
 * A web app's static files, built by scripts/lib/web-build.mjs: the box's own screens (web/, README "Screens")
 * and the central's headquarters console (web/hq/, docs/sync.md "The headquarters console"). From
 * dist/main.cjs they are read from a directory beside the bundle (dist/web, dist/hq); inside the single binary
 * from SEA assets (`<prefix>/<name>`, listed in the `<prefix>.json` asset by scripts/build-sea.mjs). All are read
 * once, at start: a few hundred KiB, and gzipped once here so a tablet on a weak Wi-Fi gets a third of the bytes.
 */
export interface WebFile {
  body: Buffer;
  /** The gzipped body, when it is worth it (text types over 1 KiB). */
  gzip?: Buffer;
  contentType: string;
  /** Hashed asset names never change content: cached for a year. index.html is revalidated on every load. */
  immutable: boolean;
}

/** Where one web app's files are: the directory beside the bundle and the SEA assets share one name. */
export interface WebApp {
  /** `web`: dist/web beside dist/main.cjs, assets `web/<name>` listed in `web.json`. */
  name: string;
  /** The app's own pages, each answered with index.html (its router shows the page). */
  appPaths: readonly string[];
  /** The Content-Security-Policy of its pages: what they may load and where they may connect. */
  csp: string;
}

/** The box's screens (README "Screens"). */
export const SCREENS_APP: WebApp = {
  name: 'web',
  appPaths: ['/', '/kitchen', '/pickup', '/tabs', '/orders', '/manager', '/kiosk'],
  // Only what is served from the box's own origin: scripts, styles and sockets of this box; menu images may come
  // from anywhere (the central, a CDN on the venue's own network).
  csp:
    "default-src 'self'; img-src * data: blob:; connect-src 'self' ws: wss:; style-src 'self' 'unsafe-inline'; " +
    "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
};

/** SEA asset key of the list of the screens' files (scripts/build-sea.mjs). */
export const WEB_MANIFEST_ASSET = `${SCREENS_APP.name}.json`;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

/**
 * Name (path under the app's root, `/`-separated) -> file; empty when the app was not built. `dir` overrides
 * the directory beside the bundle (tests point it at a directory of their own).
 */
export function loadWebFiles(app: WebApp = SCREENS_APP, dirGiven?: string): Map<string, WebFile> {
  const files = new Map<string, WebFile>();
  const add = (name: string, body: Buffer) => {
    const ext = extname(name).toLowerCase();
    files.set(name, {
      body,
      gzip: COMPRESSIBLE.has(ext) && body.length > 1024 ? gzipSync(body, { level: 9 }) : undefined,
      contentType: TYPES[ext] ?? 'application/octet-stream',
      immutable: name.startsWith('assets/'),
    });
  };
  // A directory named by the caller (`central serve --console-dir`) wins over the binary's own assets.
  if (dirGiven === undefined && isSea()) {
    let names: string[];
    try {
      names = JSON.parse(getAsset(`${app.name}.json`, 'utf8')) as string[];
    } catch {
      return files; // a binary built without this app
    }
    for (const name of names) add(name, Buffer.from(getAsset(`${app.name}/${name}`)));
    return files;
  }
  const dir = dirGiven ?? defaultDir(app.name);
  if (!existsSync(dir)) return files;
  for (const file of walk(dir)) add(relative(dir, file).split(sep).join('/'), readFileSync(file));
  return files;
}

function defaultDir(name: string): string {
  // In dist/main.cjs import.meta.url is the bundle's own URL (scripts/build.mjs): dist/<name> sits beside it.
  return fileURLToPath(new URL(`./${name}/`, import.meta.url));
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}
