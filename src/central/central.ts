import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { mountRoutes } from '../http/mount.js';
import { uws } from '../native/uws.js';
import type { HttpRequest } from '../http/types.js';
import type { Logger } from '../log.js';
import { loadOrCreateKey } from '../shared/jwt.js';
import { MAX_REQUEST_BYTES } from '../shared/sync-protocol.js';
import { openCentralDatabase } from './db/open.js';
import { ensurePartitions, monthlyPartitions } from './db/partitions.js';
import { POOL_SIZE } from './db/pool.js';
import { centralContractRoutes } from './contracts.js';
import { authRoutes } from './modules/auth/routes.js';
import { createCentralAuth } from './modules/auth/service.js';
import { deviceRoutes } from './modules/devices/routes.js';
import { createDeviceService } from './modules/devices/service.js';
import { hqRoutes } from './modules/hq/routes.js';
import { createHqService } from './modules/hq/service.js';
import { createIngestLimiter } from './modules/ingest/limiter.js';
import { ingestRoutes } from './modules/ingest/routes.js';
import { createIngestService } from './modules/ingest/service.js';
import { provision } from './modules/tenants/provision.js';
import { createCatalogueFeed, createNotifier } from './modules/catalogue/feed.js';
import { createHqCatalogue } from './modules/catalogue/hq-service.js';
import { importCatalogue } from './modules/catalogue/import.js';
import { createCatalogueRepo } from './modules/catalogue/repo.js';
import { catalogueFeedRoutes, hqCatalogueRoutes } from './modules/catalogue/routes.js';
import { inboxRoutes } from './modules/inbox/routes.js';
import { createInboxService } from './modules/inbox/service.js';
import { mediaRoutes } from './modules/media/routes.js';

export interface CentralOptions {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl?: string;
  log: Logger;
  /** Provisioning documents applied at start (idempotent); `demo` marks the built-in demo. */
  provisioning: { name: string; document: unknown; demo?: boolean }[];
}

export interface Central {
  port: number;
  stop(): Promise<void>;
}

export class CentralListenError extends Error {}

const ACCESS_TTL_SECONDS = 3600;
const REFRESH_TTL_MS = 30 * 86_400_000;
const HOUR_MS = 3_600_000;
/** Retired catalogue rows stay this long; a box whose cursor is older than one purged gets a snapshot. */
const TOMBSTONE_RETENTION_MS = 30 * 86_400_000;
/** How long shutdown waits for batches in flight before closing the pool under them. */
const DRAIN_TIMEOUT_MS = 30_000;

/** The central node's composition root: database, provisioning, modules, HTTP; returns its stop. */
export async function startCentral(o: CentralOptions): Promise<Central> {
  const dataDir = resolve(o.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o750 });
  const { log } = o;
  const db = await openCentralDatabase({ dataDir, databaseUrl: o.databaseUrl, mode: 'serve', log, poolSize: POOL_SIZE });
  try {
    const now = () => Date.now();
    const { pool } = db;
    await ensurePartitions(pool, now());
    for (const p of o.provisioning) {
      log.info({ provisioning: p.name, result: await provision(pool, p.name, p.document, { demo: p.demo }) }, 'provisioning checked');
      // The demo's whole catalogue (staff, menus, full venues), once: a restart keeps headquarters' later changes.
      if (p.demo) log.info({ catalogue: await importCatalogue(pool, p.name, p.document, { onlyNew: true }) }, 'demo catalogue checked');
    }
    const auth = createCentralAuth(pool, loadOrCreateKey(dataDir), { accessTtlSeconds: ACCESS_TTL_SECONDS, refreshTtlMs: REFRESH_TTL_MS, now });
    const devices = createDeviceService(pool, now);
    // Two connections stay free of batches: hello, enrolment and headquarters' reads always find one.
    const limiter = createIngestLimiter(POOL_SIZE - 2);
    const ingest = createIngestService({ pool, limiter, ensurePartitions: monthlyPartitions(pool, now) });
    const hq = createHqService(pool, devices);
    const notifier = createNotifier(db.url, log);
    await notifier.start();
    const feed = createCatalogueFeed(pool, notifier);

    let accepting = true;
    const app = uws().App();
    const bearerOf = (req: HttpRequest) => /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    const routes = [
      ...authRoutes(auth), ...deviceRoutes(devices), ...ingestRoutes(ingest), ...hqRoutes(hq),
      ...catalogueFeedRoutes(devices, feed, pool), ...hqCatalogueRoutes(createHqCatalogue(pool, feed)),
      ...mediaRoutes(pool, devices), ...inboxRoutes(createInboxService(pool)),
    ];
    routes.push(...centralContractRoutes(() => routes));
    mountRoutes(app, routes, {
      log, maxBodyBytes: MAX_REQUEST_BYTES, authenticate: (req) => auth.verify(bearerOf(req)), accepting: () => accepting,
      // Boxes honour Retry-After on 503 (docs/sync.md "Sync to the central node"); 5-9 s, jittered, covers a restart
      // without the boxes coming back at once.
      stopping: { message: 'the central is shutting down; retry after Retry-After seconds', retryAfterSeconds: () => 5 + Math.floor(Math.random() * 5) },
    });
    const { socket, port } = await listen(app, o.host, o.port);
    const hourly = setInterval(() => {
      auth.sweepExpired().then((removed) => log.info({ removed }, 'expired refresh tokens removed'),
        (err: unknown) => log.error({ err }, 'refresh token sweep failed'));
      createCatalogueRepo(pool).purge(new Date(now() - TOMBSTONE_RETENTION_MS)).then((removed) => {
        if (removed > 0) log.info({ removed }, 'catalogue tombstones past retention removed');
      }, (err: unknown) => log.error({ err }, 'catalogue tombstone purge failed'));
    }, HOUR_MS);
    hourly.unref();
    log.info({ address: `http://${o.host}:${port}`, port, dataDir }, 'central listening');

    return {
      port,
      async stop() {
        accepting = false;
        uws().us_listen_socket_close(socket);
        clearInterval(hourly);
        // Waiting long polls answer now ("no change"), before the pool closes under them.
        await notifier.close();
        // A batch in flight commits (and is acknowledged) or rolls back; never cut off mid-transaction.
        await Promise.race([Promise.all([limiter.idle(), feed.idle()]), new Promise((r) => setTimeout(r, DRAIN_TIMEOUT_MS))]);
        await db.close();
        log.info('central stopped');
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}

function listen(app: TemplatedApp, host: string, port: number): Promise<{ socket: us_listen_socket; port: number }> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) reject(new CentralListenError(`cannot listen on ${host}:${port} (port in use, or address not available)`));
      else resolve({ socket, port: uws().us_socket_local_port(socket) });
    });
  });
}
