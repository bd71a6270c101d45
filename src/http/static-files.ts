import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse, TemplatedApp } from 'uWebSockets.js';
import type { WebFile } from '../modules/screens/web-files.js';

// Only what is served from the box's own origin: scripts, styles and sockets of this box; menu images may come
// from anywhere (the central, a CDN on the venue's own network).
const CSP =
  "default-src 'self'; img-src * data: blob:; connect-src 'self' ws: wss:; style-src 'self' 'unsafe-inline'; " +
  "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/**
 * Serves a web app's files (GET and HEAD) at their exact paths, and index.html at the app's pages (`appPaths`:
 * the box's screens, or the central's console; src/modules/screens/web-files.ts). Every path is registered by
 * name, never as a wildcard, so no API path (and no unknown path: still the API's 404) can be shadowed.
 * Synchronous, so uWS's request is only read inside its callback.
 */
export function mountStaticFiles(
  app: TemplatedApp,
  files: Map<string, WebFile>,
  appPaths: readonly string[],
): { method: 'get'; path: string }[] {
  const index = files.get('index.html');
  if (!index) return [];
  const served: [string, WebFile][] = [
    ...appPaths.map((path): [string, WebFile] => [path, index]),
    ...[...files]
      .filter(([name]) => name !== 'index.html')
      .map(([name, file]): [string, WebFile] => [`/${name}`, file]),
  ];
  for (const [path, file] of served) {
    app.get(path, (res, req) => send(res, req, file, false));
    app.head(path, (res, req) => send(res, req, file, true));
  }
  return served.map(([path]) => ({ method: 'get', path }));
}

function send(res: UwsResponse, req: UwsRequest, file: WebFile, head: boolean): void {
  const gzip = file.gzip && /\bgzip\b/i.test(req.getHeader('accept-encoding')) ? file.gzip : undefined;
  const body = gzip ?? file.body;
  // uWS 20.30 did not count endWithoutBody (HEAD) as an answer and aborted the process unless an abort handler
  // was attached (measured: "Returning from a request handler without responding").
  res.onAborted(() => undefined);
  res.cork(() => {
    res.writeStatus('200 OK');
    res.writeHeader('content-type', file.contentType);
    res.writeHeader('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    res.writeHeader('x-content-type-options', 'nosniff');
    if (file.gzip) res.writeHeader('vary', 'Accept-Encoding');
    if (gzip) res.writeHeader('content-encoding', 'gzip');
    if (file.contentType.startsWith('text/html')) {
      res.writeHeader('content-security-policy', CSP);
      res.writeHeader('referrer-policy', 'no-referrer');
    }
    if (head) res.endWithoutBody(body.length);
    else res.end(body);
  });
}
