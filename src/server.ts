import type { TemplatedApp } from 'uWebSockets.js';
import { contractRoutes } from './http/contracts/routes.js';
import type { ApiInfo } from './http/contracts/openapi.js';
import { type Listening, listen } from './http/listen.js';
import { mountRoutes, type HttpDeps } from './http/mount.js';
import { mountStaticFiles } from './http/static-files.js';
import { uws } from './native/uws.js';
import { SCREENS_APP, type WebFile } from './modules/screens/web-files.js';
import type { Route } from './http/types.js';
import { createHub, type HubDeps } from './ws/hub.js';

import { SOCKET_PATH } from './shared/socket-protocol.js';
import { STREAM_PATH } from './modules/standby/protocol.js';

export { SOCKET_PATH };

/**
 * The uWS app with the socket mounted: made before the services that push (the publisher needs the hub), and
 * before the routes (mounted by mountHttp once the services exist). The socket route is registered before the
 * catch-all 404 of the HTTP routes.
 */
export function createSocketApp(deps: HubDeps): { app: TemplatedApp; hub: ReturnType<typeof createHub> } {
  const app = uws().App();
  return { app, hub: createHub(app, SOCKET_PATH, deps) };
}

export interface HttpListener {
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting connections; open sockets are closed by the caller. */
  stopListening(): void;
}

/**
 * Every module's routes and the screens' files on the app, and the contracts made from exactly what is mounted
 * (/openapi.json from these routes, docs/api.md "Contracts: /openapi.json and /asyncapi.json").
 */
export function mountHttp(
  app: TemplatedApp,
  routes: Route[],
  deps: HttpDeps & { contracts: ApiInfo },
  webFiles = new Map<string, WebFile>(),
): HttpListener {
  // The screens' files (README "Screens"), each at its own path: nothing shadows an API path.
  const webPaths = mountStaticFiles(app, webFiles, SCREENS_APP);
  const mounted: Route[] = [...routes];
  mounted.push(...contractRoutes(() => mounted, deps.contracts));
  mountRoutes(app, mounted, deps, [
    { method: 'get', path: SOCKET_PATH },
    { method: 'get', path: STREAM_PATH },
    ...webPaths,
  ]);
  let listening: Listening | undefined;

  return {
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
