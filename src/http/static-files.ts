import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse, TemplatedApp } from 'uWebSockets.js';
import type { WebApp, WebFile } from '../modules/screens/web-files.js';

/**
 * Serves a web app's files (GET and HEAD) at their exact paths, and index.html at the app's pages (`appPaths`:
 * the box's screens, or the central's console, with its CSP; src/modules/screens/web-files.ts). Every path is registered by
 * name, never as a wildcard, so no API path (and no unknown path: still the API's 404) can be shadowed.
 * Synchronous, so uWS's request is only read inside its callback.
 */
export function mountStaticFiles(
  uwsApp: TemplatedApp,
  files: Map<string, WebFile>,
  app: Pick<WebApp, 'appPaths' | 'csp'>,
): { method: 'get'; path: string }[] {
  const index = files.get('index.html');
  if (!index) return [];
  const served: [string, WebFile][] = [
    ...app.appPaths.map((path): [string, WebFile] => [path, index]),
    ...[...files]
      .filter(([name]) => name !== 'index.html')
      .map(([name, file]): [string, WebFile] => [`/${name}`, file]),
  ];
  for (const [path, file] of served) {
    uwsApp.get(path, (res, req) => send(res, req, file, app.csp, false));
    uwsApp.head(path, (res, req) => send(res, req, file, app.csp, true));
  }
  return served.map(([path]) => ({ method: 'get', path }));
}

function send(res: UwsResponse, req: UwsRequest, file: WebFile, csp: string, head: boolean): void {
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
      res.writeHeader('content-security-policy', csp);
      res.writeHeader('referrer-policy', 'no-referrer');
    }
    if (head) res.endWithoutBody(body.length);
    else res.end(body);
  });
}
