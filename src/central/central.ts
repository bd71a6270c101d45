import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bearerOf } from '../http/listen.js';
import type { ForwardedHeader } from '../http/client-address.js';
import type { Logger } from '../log.js';
import { type CentralDatabase, openCentralDatabase } from './db/open.js';
import { ensurePartitions, monthlyPartitions } from './db/partitions.js';
import { type Pool, POOL_SIZE } from './db/pool.js';
import { createCentralHttp } from './http.js';
import { authRoutes } from './modules/auth/routes.js';
import { CENTRAL_AUTH_DEFAULTS, createCentralAuth } from './modules/auth/service.js';
import { loadSigningKey } from './modules/auth/signing-key.js';
import { consoleRoutes } from './modules/console/routes.js';
import { loadConsoleFiles } from './modules/console/web.js';
import { deviceHqRoutes } from './modules/devices/hq-routes.js';
import { deadLetterRoutes } from './modules/ingest/dead-letter-routes.js';
import { deviceRoutes } from './modules/devices/routes.js';
import { createDatabaseProbe } from './modules/health/probe.js';
import { centralHealthRoutes } from './modules/health/routes.js';
import { createDeviceService } from './modules/devices/service.js';
import { createStandbyLease } from './modules/devices/standby-lease.js';
import { hqRoutes } from './modules/hq/routes.js';
import { createReadSlots, inReadSlots } from './modules/hq/read-slots.js';
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
import { createPatchMaker } from './modules/releases/patches.js';
import { createRolloutService } from './modules/releases/rollout-service.js';
import { releaseRoutes } from './modules/releases/routes.js';
import { createReleaseService } from './modules/releases/service.js';
import { reportRoutes } from './modules/reports/routes.js';
import { createReportsService } from './modules/reports/service.js';
import { createAddressList } from '../shared/addresses.js';
import { createRuntime, type Service, type ServiceFailure, serviceOf } from '../shared/runtime.js';
import { LEASE_TTL_MS } from '../shared/sync-protocol.js';

export interface CentralOptions {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl?: string;
  /** The embedded PostgreSQL's port on 127.0.0.1 (default a free one; docs/sync.md "The central's ports"). */
  databasePort?: number;
  log: Logger;
  /** Provisioning documents applied at start (idempotent); `demo` marks the built-in demo. */
  provisioning: { name: string; document: unknown; demo?: boolean }[];
  /** The headquarters console's files from this directory instead of dist/hq (a console being developed). */
  consoleDir?: string;
  /** A retry of a refresh within this long gets the same pair (default 30 s, as the box's auth.refreshRetryGraceSeconds). */
  refreshRetryGraceMs?: number;
  /** How long a standby lease lasts (default LEASE_TTL_MS; docs/sync.md "The standby lease"). */
  standbyLeaseMs?: number;
  /** This process's database connections (default POOL_SIZE; docs/sync.md "Running it": sizing with N processes). */
  poolSize?: number;
  /** Balancers or proxies whose forwarding headers name the client (docs/sync.md "Several central processes"). */
  trustedProxies?: string[];
  /** The one header they write (src/http/client-address.ts); default x-forwarded-for. */
  forwardedHeader?: ForwardedHeader;
  /** Take protocol-1 boxes' unstamped signed requests while a fleet upgrades (docs/sync.md "Signed requests"). */
  acceptProtocol1?: boolean;
}

export interface Central {
  port: number;
  stop(): Promise<void>;
  /** Resolves if a service whose policy is 'fatal' fails: the caller stops the central and exits non-zero. */
  failed: Promise<ServiceFailure>;
}

const ACCESS_TTL_SECONDS = 3600;
const REFRESH_TTL_MS = 30 * 86_400_000;
const HOUR_MS = 3_600_000;
/** Retired catalogue rows stay this long; a box whose cursor is older than one purged gets a snapshot. */
const TOMBSTONE_RETENTION_MS = 30 * 86_400_000;
/** How long shutdown waits for batches in flight before closing the pool under them (the runtime logs it). */
const DRAIN_TIMEOUT_MS = 30_000;
/** Closing the pool (3 s at most) and a fast shutdown of the embedded cluster (10 s, then SIGKILL): src/central/db. */
const DATABASE_STOP_MS = 20_000;

/**
 * The central node's composition root: database, provisioning, modules, HTTP, each made from what is above it;
 * then the runtime runs the services in order and stops them in the reverse order.
 */
export async function startCentral(o: CentralOptions): Promise<Central> {
  const dataDir = resolve(o.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o750 });
  const { log } = o;
  let reportFailure!: (failure: ServiceFailure) => void;
  const failed = new Promise<ServiceFailure>((resolve) => (reportFailure = resolve));
  const runtime = createRuntime({ log, onFatal: reportFailure });
  const poolSize = o.poolSize ?? POOL_SIZE;
  const db = await openCentralDatabase({
    dataDir,
    databaseUrl: o.databaseUrl,
    databasePort: o.databasePort,
    mode: 'serve',
    log,
    poolSize,
  });
  let closing: Promise<void> | undefined;
  const closeDb = () => (closing ??= db.close());
  try {
    const now = () => Date.now();
    const { pool } = db;
    await ensurePartitions(pool, now());
    for (const p of o.provisioning) {
      log.info(
        { provisioning: p.name, result: await provision(pool, p.name, p.document, { demo: p.demo }) },
        'provisioning checked',
      );
      // The demo's whole catalogue (staff, menus, full venues), once: a restart keeps headquarters' later changes.
      if (p.demo)
        log.info(
          { catalogue: await importCatalogue(pool, p.name, p.document, { onlyNew: true }) },
          'demo catalogue checked',
        );
    }
    const auth = createCentralAuth(pool, await loadSigningKey(pool, dataDir, log), {
      ...CENTRAL_AUTH_DEFAULTS,
      accessTtlSeconds: ACCESS_TTL_SECONDS,
      refreshTtlMs: REFRESH_TTL_MS,
      now,
      refreshRetryGraceMs: o.refreshRetryGraceMs ?? CENTRAL_AUTH_DEFAULTS.refreshRetryGraceMs,
    });
    const notifier = createNotifier(db.url, log);
    const probe = createDatabaseProbe(db.url, log, { up: db.up });
    const rollouts = createRolloutService(pool, { now, log, generation: notifier.generation });
    const devices = createDeviceService(pool, now, {
      // A failed evaluation must not fail the hello: the next report or long poll evaluates again.
      onUpdateReport: (tenantId) =>
        rollouts
          .evaluate(tenantId)
          .catch((err: unknown) => log.error({ err, tenant: tenantId }, 'rollout evaluation failed')),
      acceptProtocol1: o.acceptProtocol1,
    });
    const patchMaker = createPatchMaker(pool, { log, workDir: join(dataDir, 'release-work') });
    const releases = createReleaseService(pool, {
      onReady: (tenantId, sha256) => patchMaker.schedule(tenantId, sha256),
    });
    // Two connections stay free of batches: hello, enrolment and headquarters' reads always find one.
    const limiter = createIngestLimiter(poolSize - 2);
    const ingest = createIngestService({ pool, limiter, ensurePartitions: monthlyPartitions(pool, now) });
    // Two heavy HQ reads at a time (with ingest's poolSize - 2: the whole pool), the rest wait in memory.
    const readSlots = createReadSlots(2, 64);
    const hq = inReadSlots(readSlots, createHqService(pool, devices));
    const feed = createCatalogueFeed(pool, notifier);
    const hqCatalogue = createHqCatalogue(pool, feed);

    const http = createCentralHttp({
      host: o.host,
      port: o.port,
      dataDir,
      log,
      authenticate: (req) => auth.verify(bearerOf(req)),
      consoleFiles: loadConsoleFiles(log, o.consoleDir),
      trustedProxies: o.trustedProxies?.length ? createAddressList(o.trustedProxies) : undefined,
      forwardedHeader: o.forwardedHeader,
      routes: [
        ...centralHealthRoutes({ database: probe.state, listening: notifier.listening }),
        ...authRoutes(auth),
        ...consoleRoutes(pool),
        ...deviceRoutes(devices, createStandbyLease(pool, devices.authenticate, now, o.standbyLeaseMs ?? LEASE_TTL_MS)),
        ...deviceHqRoutes(devices, hqCatalogue),
        ...ingestRoutes(ingest),
        ...deadLetterRoutes(pool),
        ...hqRoutes(hq),
        ...reportRoutes(inReadSlots(readSlots, createReportsService(pool, devices, now))),
        ...catalogueFeedRoutes(devices, feed, pool, (device) =>
          rollouts.targetFor({
            tenantId: device.tenantId,
            deviceId: device.deviceId,
            venueId: device.venueId,
            version: device.programVersion,
            arch: device.arch,
          }),
        ),
        ...hqCatalogueRoutes(hqCatalogue),
        ...mediaRoutes(pool, devices),
        ...inboxRoutes(createInboxService(pool)),
        ...releaseRoutes(releases, rollouts, devices),
      ],
    });

    const catalogueListener = serviceOf({ start: () => notifier.start(), stop: () => notifier.close() });
    // Started in this order, stopped in the reverse one (docs/architecture.md "Wiring and lifecycle").
    await runtime.start([
      // An embedded cluster that died and did not start again fails it: the central stops and exits 69.
      { name: 'database', service: databaseService(db, closeDb), policy: 'fatal', deadlineMs: DATABASE_STOP_MS },
      { name: 'readiness probe', service: serviceOf({ stop: () => probe.close() }), policy: 'fatal' },
      // A batch in flight commits (and is acknowledged) or rolls back; never cut off mid-transaction.
      {
        name: 'batches in flight',
        service: serviceOf({ drain: () => Promise.all([limiter.idle(), feed.idle()]).then(() => {}) }),
        policy: 'fatal',
        deadlineMs: DRAIN_TIMEOUT_MS,
      },
      // Closed before the batches are waited for: waiting long polls answer now ("no change").
      { name: 'catalogue notifier', service: catalogueListener, policy: 'fatal', ready: catalogueListener.started },
      { name: 'hourly sweeps', service: hourlySweeps(auth, pool, log, now), policy: 'fatal' },
      // Patches the central stopped before making are made now, in the background; stopping waits for the one under way.
      {
        name: 'release patches',
        service: serviceOf({
          start: () =>
            void patchMaker.resume().catch((err: unknown) => log.error({ err }, 'resuming release patches failed')),
          drain: () => patchMaker.idle(),
        }),
        policy: 'fatal',
        deadlineMs: DRAIN_TIMEOUT_MS,
      },
      { name: 'http', service: http.service, policy: 'fatal', ready: http.listening },
    ]);

    return {
      port: http.port(),
      failed,
      async stop() {
        await runtime.stop();
        log.info('central stopped');
      },
    };
  } catch (err) {
    await runtime.stop();
    await closeDb();
    throw err;
  }
}

/**
 * The database as a service: it runs while the database does (src/central/db/cluster-watch.ts restarts an embedded
 * cluster that dies, and gives up with exit 69), and stopping it closes the pool and stops the cluster.
 */
function databaseService(db: CentralDatabase, close: () => Promise<void>): Service {
  let release: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => (release = resolve));
  return {
    run: () => Promise.race([db.failed, stopped]),
    async stop() {
      try {
        await close();
      } finally {
        release?.();
      }
    },
  };
}

/** Expired refresh tokens and catalogue tombstones past retention, removed every hour. */
function hourlySweeps(auth: ReturnType<typeof createCentralAuth>, pool: Pool, log: Logger, now: () => number): Service {
  let hourly: NodeJS.Timeout | undefined;
  return serviceOf({
    start() {
      hourly = setInterval(() => {
        auth.sweepExpired().then(
          (removed) => log.info({ removed }, 'expired refresh tokens removed'),
          (err: unknown) => log.error({ err }, 'refresh token sweep failed'),
        );
        createCatalogueRepo(pool)
          .purge(new Date(now() - TOMBSTONE_RETENTION_MS))
          .then(
            (removed) => {
              if (removed > 0) log.info({ removed }, 'catalogue tombstones past retention removed');
            },
            (err: unknown) => log.error({ err }, 'catalogue tombstone purge failed'),
          );
      }, HOUR_MS);
      hourly.unref();
    },
    stop: () => clearInterval(hourly),
  });
}
