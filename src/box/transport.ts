import type { Config } from '../config.js';
import type { Db } from '../db/open.js';
import { MIGRATIONS } from '../db/migrate.js';
import type { WalSync } from '../db/wal-sync.js';
import type { HttpRequest, Principal } from '../http/types.js';
import { bearerOf } from '../http/listen.js';
import type { Logger } from '../log.js';
import { authRoutes } from '../modules/auth/routes.js';
import type { AuthService } from '../modules/auth/service.js';
import { createPublisher } from '../modules/events/publisher.js';
import { createAddressList } from '../shared/addresses.js';
import { type BoxMetrics, registerSocketGauges } from '../modules/health/metrics.js';
import { readiness } from '../modules/health/readiness.js';
import { healthRoutes } from '../modules/health/routes.js';
import { mediaRoutes } from '../modules/media/routes.js';
import { menuRoutes } from '../modules/menus/routes.js';
import { soldOutRoutes } from '../modules/menus/sold-out-routes.js';
import { orderingRoutes } from '../modules/ordering/routes.js';
import { venueWatchGuard } from '../modules/ordering/service.js';
import { printingRoutes } from '../modules/printing/routes.js';
import { type ScreensBootstrap, screensRoutes } from '../modules/screens/routes.js';
import { loadWebFiles } from '../modules/screens/web-files.js';
import type { createDiskWatchdog } from '../modules/storage/disk-watchdog.js';
import type { PrimarySide } from '../modules/standby/primary-side.js';
import { peerStateRoute } from '../modules/standby/probe.js';
import { summarizeStandby } from '../modules/standby/status.js';
import { syncRoutes } from '../modules/sync/routes.js';
import { syncStatus } from '../modules/sync/status.js';
import { venueRoutes } from '../modules/venues/routes.js';
import { warehouseRoutes } from '../modules/warehouse/routes.js';
import { createSocketApp, mountHttp } from '../server.js';
import type { ServiceFailure, Service } from '../shared/runtime.js';
import { pause } from '../shared/runtime.js';
import { CLOSE_STOPPING } from '../shared/socket-protocol.js';
import { createSocketTickets, socketAuthenticator, socketTicketRoute } from '../ws/socket-tickets.js';
import type { Domain, Repos } from './domain.js';
import pkg from '../../package.json';

const API_DESCRIPTION =
  "The venue box's API: OAuth tokens, venues, menus, orders as queued commands whose results are " +
  'pushed on the socket, the order lifecycle, staff views, the warehouse, printers and sync status (docs/api.md "The API").';

export interface SocketDeps {
  config: Config;
  log: Logger;
  repos: Repos;
  auth: AuthService;
  walSync: WalSync;
  metrics: BoxMetrics | undefined;
}

/**
 * The uWS app, its socket hub, and the publisher that sends committed frames to it: made before every service
 * that pushes (the spooler's printer statuses, the command queue, the catalogue from the central).
 */
export function createSockets({ config, log, repos, auth, walSync, metrics }: SocketDeps) {
  // Browsers cannot set headers on a WebSocket, so the socket alone also takes a ticket (`?ticket=`) or the token
  // itself (`?access_token=`, older clients); HTTP calls do not, as query strings end up in proxy and access logs.
  const tickets = createSocketTickets();
  const { app, hub } = createSocketApp({
    log,
    events: repos.events,
    sockets: config.sockets,
    authenticateSocket: socketAuthenticator(tickets, (token) => auth.verify(token)),
    authorizeVenue: venueWatchGuard(repos.venues),
    revokedReason: auth.revokedReason,
    ...proxiesOf(config),
  });
  // A revoked token's sockets close at once, not at its exp (docs/api.md "Token revocation").
  auth.onRevoked((rows) => hub.revoke(rows));
  if (metrics) registerSocketGauges(metrics, hub);
  const publisher = createPublisher(walSync, hub);
  /** Started first and stopped last of the serving parts: the frames of the last commands go out before the sockets close. */
  let stopped: (() => void) | undefined;
  const service: Service = {
    run: () => new Promise<void>((r) => (stopped = r)),
    drain: () => pause(20),
    stop() {
      hub.closeAll(CLOSE_STOPPING, 'venue-box is stopping');
      stopped?.();
    },
  };
  return { app, hub, tickets, publisher, service };
}
export type Sockets = ReturnType<typeof createSockets>;

export interface HttpDeps {
  config: Config;
  log: Logger;
  db: Db;
  dataDir: string;
  repos: Repos;
  auth: AuthService;
  domain: Domain;
  sockets: Sockets;
  disk: ReturnType<typeof createDiskWatchdog>;
  metrics: BoxMetrics | undefined;
  standby: PrimarySide;
  screens: ScreensBootstrap | undefined;
  /** The service that failed for good, if any (the runtime's: /readyz reports it). */
  failedService(): ServiceFailure | undefined;
  now(): number;
}

/**
 * Every module's routes on the app, and the listener as a service: it binds the port when run (its `ready`
 * resolves then) and at shutdown stops taking requests first (503 unavailable), letting the confirmations already
 * in this tick commit and answer.
 */
export function createHttp(d: HttpDeps) {
  const { config, log, repos, domain, now } = d;
  let accepting = true;
  const authenticate = (req: HttpRequest): Principal => d.auth.verify(bearerOf(req));
  const ready = () =>
    readiness(!accepting, () => ({
      schemaVersion: d.db.pragma('user_version', { simple: true }) as number,
      latestSchema: MIGRATIONS.at(-1)!.version,
      readOnly: d.db.readonly,
      disk: d.disk.full() ? 'full' : d.disk.level(),
      queueFailing: domain.queue.failing(),
      failedService: d.failedService()?.name,
    }));
  const listener = mountHttp(
    d.sockets.app,
    [
      ...authRoutes(d.auth),
      socketTicketRoute(d.sockets.tickets),
      ...venueRoutes(repos.venues),
      ...menuRoutes(domain.menus),
      ...soldOutRoutes(domain.soldOut, now),
      ...orderingRoutes(domain.ordering),
      ...warehouseRoutes(domain.warehouse),
      ...printingRoutes(domain.printing),
      ...syncRoutes(() => syncStatus(repos.sync, d.dataDir, now(), repos.catalogue)),
      ...mediaRoutes(repos.mediaStore),
      ...d.standby.routes(() => d.standby.status()),
      peerStateRoute(d.standby.state),
      ...healthRoutes({
        metrics: d.metrics,
        allow: createAddressList(config.metrics.allowAddresses),
        authenticate,
        readiness: ready,
        standby: () => summarizeStandby(d.standby.status()),
      }),
      ...(config.screens.enabled ? screensRoutes(d.screens) : []),
    ],
    {
      log,
      authenticate,
      maxBodyBytes: config.http.maxBodyBytes,
      corsOrigins: config.http.corsOrigins,
      ...proxiesOf(config),
      accepting: () => accepting,
      storage: d.disk,
      contracts: { title: 'venue-box', version: pkg.version, description: API_DESCRIPTION },
    },
    config.screens.enabled ? webFiles(log) : undefined,
  );

  let port: number | undefined;
  let bound!: () => void;
  const listening = new Promise<void>((r) => (bound = r));
  let stopped: (() => void) | undefined;
  const service: Service = {
    async run() {
      const until = new Promise<void>((r) => (stopped = r));
      port = await listener.listen(config.host, config.port);
      log.info(
        { address: `http://${config.host}:${port}`, host: config.host, port, dataDir: d.dataDir },
        'venue-box listening',
      );
      bound();
      await until;
    },
    async drain() {
      accepting = false;
      listener.stopListening();
      await pause(20);
    },
    stop: () => stopped?.(),
  };
  return {
    service,
    /** Resolves once the port is bound. */
    listening: () => listening,
    /** The bound port (after `listening`). */
    port: (): number => port!,
  };
}

/**
 * `http.trustedProxies` and `http.forwardedHeader`, for the routes and the socket alike: throttles, /metrics'
 * allowAddresses and the logs all see the client a trusted proxy forwarded for (docs/api.md "Behind a reverse
 * proxy (nginx)").
 */
function proxiesOf(config: Config) {
  const { trustedProxies, forwardedHeader } = config.http;
  return trustedProxies.length > 0 ? { trustedProxies: createAddressList(trustedProxies), forwardedHeader } : {};
}

/** The screens' files (README "Screens"); a checkout that has not built them serves the API alone. */
function webFiles(log: Logger): ReturnType<typeof loadWebFiles> {
  const files = loadWebFiles();
  if (!files.has('index.html'))
    log.warn('screens: no web files found (npm run build writes dist/web): / is not served');
  return files;
}
