import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { getAsset, isSea } from 'node:sea';

/**
 * The box's own screens (web/, README "Screens"): static files built by scripts/lib/web-build.mjs. From
 * dist/main.cjs they are read from dist/web beside the bundle; inside the single binary from SEA assets
 * (`web/<name>`, listed in the `web.json` asset by scripts/build-sea.mjs). All are read once, at start: a few
 * hundred KiB, and gzipped once here so a tablet on a weak Wi-Fi gets a third of the bytes.
 */
export interface WebFile {
  body: Buffer;
  /** The gzipped body, when it is worth it (text types over 1 KiB). */
  gzip?: Buffer;
  contentType: string;
  /** Hashed asset names never change content: cached for a year. index.html is revalidated on every load. */
  immutable: boolean;
}

/** SEA asset key of the list of web files (scripts/build-sea.mjs). */
export const WEB_MANIFEST_ASSET = 'web.json';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.ico': 'image/x-icon',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

/** Name (path under the web root, `/`-separated) -> file; empty when the web app was not built. */
export function loadWebFiles(dir = defaultWebDir()): Map<string, WebFile> {
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
  if (isSea()) {
    let names: string[];
    try {
      names = JSON.parse(getAsset(WEB_MANIFEST_ASSET, 'utf8')) as string[];
    } catch {
      return files; // a binary built without the screens
    }
    for (const name of names) add(name, Buffer.from(getAsset(`web/${name}`)));
    return files;
  }
  if (!existsSync(dir)) return files;
  for (const file of walk(dir)) add(relative(dir, file).split(sep).join('/'), readFileSync(file));
  return files;
}

function defaultWebDir(): string {
  // In dist/main.cjs import.meta.url is the bundle's own URL (scripts/build.mjs): dist/web sits beside it.
  return fileURLToPath(new URL('./web/', import.meta.url));
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}
