import { type Listening, listen } from '../http/listen.js';
import { mountRoutes } from '../http/mount.js';
import { mountStaticFiles } from '../http/static-files.js';
import type { WebFile } from '../modules/screens/web-files.js';
import type { Principal, HttpRequest, Route } from '../http/types.js';
import type { Logger } from '../log.js';
import { uws } from '../native/uws.js';
import { type Service, serviceOf } from '../shared/runtime.js';
import { MAX_REQUEST_BYTES } from '../shared/sync-protocol.js';
import type { AddressList } from '../shared/addresses.js';
import type { ForwardedHeader } from '../http/client-address.js';
import { centralContractRoutes } from './contracts.js';
import { databaseUnavailable, unstorableText } from './db/pool.js';
import { HQ_CONSOLE_APP } from './modules/console/web.js';

export interface CentralHttpDeps {
  host: string;
  port: number;
  dataDir: string;
  log: Logger;
  routes: Route[];
  authenticate(req: HttpRequest): Principal;
  /** The headquarters console's files (src/central/modules/console/web.ts); none: the API alone. */
  consoleFiles?: Map<string, WebFile>;
  /** Proxies whose forwarding headers name the client; absent: every client is its TCP peer. */
  trustedProxies?: AddressList;
  forwardedHeader?: ForwardedHeader;
}

/**
 * The central's routes on a uWS app, and its listener as a service: it binds the port when run (`listening`
 * resolves then); at shutdown it stops taking requests first (503 with Retry-After), the batches already taken go on.
 */
export function createCentralHttp(d: CentralHttpDeps): {
  service: Service;
  listening(): Promise<void>;
  port(): number;
} {
  let accepting = true;
  const app = uws().App();
  // The central's own contract is made from exactly what is mounted, itself included (src/central/contracts.ts).
  const routes: Route[] = [...d.routes];
  routes.push(...centralContractRoutes(() => routes));
  // The console's files, each at its own path as the box serves its screens: no API path is shadowed.
  const consolePaths = mountStaticFiles(app, d.consoleFiles ?? new Map(), HQ_CONSOLE_APP);
  mountRoutes(
    app,
    routes,
    {
      log: d.log,
      maxBodyBytes: MAX_REQUEST_BYTES,
      authenticate: d.authenticate,
      accepting: () => accepting,
      refuseNul: true,
      trustedProxies: d.trustedProxies,
      forwardedHeader: d.forwardedHeader,
      expectedError(err) {
        const answer = databaseUnavailable(err);
        if (answer) d.log.warn({ err: (err as Error).message }, 'request refused: the database is busy or away');
        return answer ?? unstorableText(err);
      },
      // Boxes honour Retry-After on 503 (docs/sync.md "Sync to the central node"); 5-9 s, jittered, covers a restart
      // without the boxes coming back at once.
      stopping: {
        message: 'the central is shutting down; retry after Retry-After seconds',
        retryAfterSeconds: () => 5 + Math.floor(Math.random() * 5),
      },
    },
    consolePaths,
  );
  let bound: Listening | undefined;
  let ready!: () => void;
  const listening = new Promise<void>((r) => (ready = r));
  const service = serviceOf({
    async start() {
      bound = await listen(app, d.host, d.port);
      d.log.info(
        { address: `http://${d.host}:${bound.port}`, port: bound.port, dataDir: d.dataDir },
        'central listening',
      );
      ready();
    },
    drain() {
      accepting = false;
      bound?.close();
    },
  });
  return { service, listening: () => listening, port: () => bound!.port };
}
