import type { Logger } from '../../../log.js';
import { loadWebFiles, type WebApp, type WebFile } from '../../../modules/screens/web-files.js';

/**
 * The headquarters console (web/hq/, docs/sync.md "The headquarters console"): dist/hq beside dist/main.cjs, or
 * the single binary's assets `hq/<name>` listed in `hq.json`; index.html at each of its pages.
 */
export const HQ_CONSOLE_APP: WebApp = {
  name: 'hq',
  appPaths: ['/', '/dashboard', '/catalogue', '/fleet', '/orders', '/stock', '/reports'],
  // Everything the console shows comes from the central itself: menu images are fetched with the bearer token and
  // shown as blob: URLs, and it opens no socket. Nothing markup could inject may load or send from elsewhere.
  csp:
    "default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; style-src 'self' 'unsafe-inline'; " +
    "script-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
};

/** The console's files (from `dir` when given: `central serve --console-dir`); a central without them says so once. */
export function loadConsoleFiles(log: Logger, dir?: string): Map<string, WebFile> {
  const files = loadWebFiles(HQ_CONSOLE_APP, dir);
  if (!files.has('index.html'))
    log.warn(
      { dir: dir ?? 'dist/hq' },
      'headquarters console: no web files found (npm run build writes dist/hq): / is not served',
    );
  return files;
}
