import type { TemplatedApp } from 'uWebSockets.js';
import { contractRoutes } from './http/contracts/routes.js';
import type { ApiInfo } from './http/contracts/openapi.js';
import { type Listening, listen } from './http/listen.js';
import { mountRoutes, type HttpDeps } from './http/mount.js';
import { mountStaticFiles } from './http/static-files.js';
import { uws } from './native/uws.js';
import type { WebFile } from './modules/screens/web-files.js';
import type { Route } from './http/types.js';
import { createHub, type HubDeps } from './ws/hub.js';

import { SOCKET_PATH } from './shared/socket-protocol.js';

export { SOCKET_PATH };

export interface Server {
  app: TemplatedApp;
  hub: ReturnType<typeof createHub>;
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting connections; open sockets are closed by the caller. */
  stopListening(): void;
}

/**
 * The uWS app with every module's routes and the socket mounted, and the contracts made from exactly what is
 * mounted (/openapi.json from these routes, docs/api.md "Contracts: /openapi.json and /asyncapi.json").
 */
export function createServer(routes: Route[], deps: HttpDeps & HubDeps & { contracts: ApiInfo }, webFiles = new Map<string, WebFile>()): Server {
  const uWS = uws();
  const app = uWS.App();
  // The socket route is registered before the catch-all 404 of the HTTP routes.
  const hub = createHub(app, SOCKET_PATH, deps);
  // The screens' files (README "Screens"), each at its own path: nothing shadows an API path.
  const webPaths = mountStaticFiles(app, webFiles);
  const mounted: Route[] = [...routes];
  mounted.push(...contractRoutes(() => mounted, deps.contracts));
  mountRoutes(app, mounted, deps, [{ method: 'get', path: SOCKET_PATH }, ...webPaths]);
  let listening: Listening | undefined;

  return {
    app,
    hub,
    async listen(host, port) {
      listening = await listen(app, host, port);
      return listening.port;
    },
    stopListening() {
      listening?.close();
      listening = undefined;
    },
  };
}
