import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Config } from './config.js';
import { CHECKPOINT_WAL_BYTES } from './db/checkpoint.js';
import { createCheckpointer } from './db/checkpointer.js';
import { DB_FILE, openDatabase, PAGE_SIZE, type Db } from './db/open.js';
import { createWalSync, durableWrites } from './db/wal-sync.js';
import { migrate, MIGRATIONS } from './db/migrate.js';
import { convertPageSize, pageSizeOf } from './db/page-size.js';
import type { HttpRequest } from './http/types.js';
import type { Logger } from './log.js';
import { loadOrCreateKey } from './shared/jwt.js';
import { createAuthRepo } from './modules/auth/repo.js';
import { authRoutes } from './modules/auth/routes.js';
import { createAuthService } from './modules/auth/service.js';
import { soldOutRoutes } from './modules/menus/sold-out-routes.js';
import { createSoldOutFlags } from './modules/menus/sold-out.js';
import { createMenuRepo } from './modules/menus/repo.js';
import { menuRoutes } from './modules/menus/routes.js';
import { createMenuService } from './modules/menus/service.js';
import { createCommandQueue } from './modules/ordering/command-queue.js';
import { createPublisher } from './modules/events/publisher.js';
import { createPrintJobs } from './modules/ordering/print-jobs.js';
import { createOrderRepo } from './modules/ordering/repo.js';
import { orderingRoutes } from './modules/ordering/routes.js';
import { COMMAND_KINDS, createOrderingService } from './modules/ordering/service.js';
import { createPrintRepo } from './modules/printing/repo.js';
import { printingRoutes } from './modules/printing/routes.js';
import { createPrintingService } from './modules/printing/service.js';
import { createSpooler } from './modules/printing/spooler.js';
import { publishPrinterStatus } from './modules/printing/status-events.js';
import { createProvisioningRepo } from './modules/provisioning/repo.js';
import { applyProvisioning } from './modules/provisioning/service.js';
import { createVenueRepo } from './modules/venues/repo.js';
import { venueRoutes } from './modules/venues/routes.js';
import { createWarehouseRepo } from './modules/warehouse/repo.js';
import { warehouseRoutes } from './modules/warehouse/routes.js';
import { createWarehouseService } from './modules/warehouse/service.js';
import { createRestoreApplier } from './modules/sync/applier.js';
import { createOutbox } from './modules/sync/outbox.js';
import { createSyncRepo } from './modules/sync/repo.js';
import { syncRoutes } from './modules/sync/routes.js';
import { createSender } from './modules/sync/sender.js';
import { provisioningWithout } from './modules/sync/catalogue-apply.js';
import { createCatalogueRepo } from './modules/sync/catalogue-repo.js';
import type { InboxResultBody } from './shared/sync-messages.js';
import { createPuller } from './modules/sync/puller.js';
import { venueStream } from './modules/events/event-store.js';
import { applyCentralAnswer } from './modules/sync/central-answer.js';
import { reportCentralOrders } from './modules/sync/inbox-orders.js';
import { createMediaFetcher } from './modules/media/fetcher.js';
import { createMediaRepo } from './modules/media/repo.js';
import { mediaRoutes } from './modules/media/routes.js';
import { createMediaStore } from './modules/media/store.js';
import { deviceSigner } from './modules/sync/signer.js';
import { syncStatus } from './modules/sync/status.js';
import { createServer } from './server.js';
import { resolveScreensBootstrap, type ScreensBootstrap, screensRoutes } from './modules/screens/routes.js';
import { loadWebFiles } from './modules/screens/web-files.js';
import { CLOSE_STOPPING } from './shared/socket-protocol.js';
import pkg from '../package.json';
import { nowMs } from './shared/clock.js';
import { createEventStore } from './modules/events/event-store.js';
import { createDiskWatchdog } from './modules/storage/disk-watchdog.js';
import { createAddressList } from './modules/health/addresses.js';
import { createBoxMetrics } from './modules/health/metrics.js';
import { readiness } from './modules/health/readiness.js';
import { healthRoutes } from './modules/health/routes.js';
import { createRetention } from './modules/storage/retention.js';
import { createBackupJob } from './modules/backup/service.js';
import { DataDirLockedError, lockDataDir } from './db/data-dir-lock.js';
import { createJobs } from './jobs.js';
import { type NamedService, pause, type Service, stopInOrder } from './shared/service.js';

export interface BoxOptions {
  config: Config;
  log: Logger;
  /** Provisioning documents applied at start, by name (the demo, a provisioning file). */
  provisioning: { name: string; document: unknown }[];
  /** The --config file, read again by the scheduled backup (src/modules/backup/service.ts). */
  configFile?: string;
}

export interface Box {
  port: number;
  db: Db;
  stop(): Promise<void>;
}

export class StartError extends Error {}

const API_DESCRIPTION = "The venue box's API: OAuth tokens, venues, menus, orders as queued commands whose results are "
  + 'pushed on the socket, the order lifecycle, staff views, the warehouse, printers and sync status (docs/api.md "The API").';

/** Opens the data directory and database, provisions, starts the server and the scheduled jobs. */
export async function startBox({ config, log, provisioning, configFile }: BoxOptions): Promise<Box> {
  const dataDir = resolve(config.dataDir);
  prepareDataDir(dataDir);
  // Held while the box runs: one box per data dir, and `venue-box restore` refuses it (docs/operations.md "Backups and restore").
  const lock = lockDataDirForStart(dataDir);
  let db: Db | undefined;
  try {
    const file = join(dataDir, DB_FILE);
    db = openDatabase(file);
    migrate(db);
    // An older box's file, after its migrations (whose freed pages the rewrite leaves out): docs/operations.md
    // "What a `new` writes".
    if ((pageSizeOf(file) ?? PAGE_SIZE) !== PAGE_SIZE) {
      db.close();
      convertPageSize(file, log);
      db = openDatabase(file);
    }
    const provisioningRepo = createProvisioningRepo(db);
    // A tenant whose catalogue came from the central is the central's: its entry in a provisioning file is skipped.
    const fromCentral = createCatalogueRepo(db).state();
    for (const p of provisioning) {
      const document = provisioningWithout(p.document, fromCentral.rev > 0 ? fromCentral.tenantId : null);
      const result = applyProvisioning(provisioningRepo, p.name, document);
      log.info({ provisioning: p.name, result }, 'provisioning checked');
    }
    const screens = resolveScreensBootstrap(config.screens, provisioning);
    const box = await serveBoxApi(db, dataDir, config, log, createBackupJob({ dataDir, configFile, log }), screens);
    return { ...box, stop: () => box.stop().finally(() => lock.release()) };
  } catch (err) {
    db?.close();
    lock.release();
    throw err;
  }
}

function lockDataDirForStart(dataDir: string): { release(): void } {
  try {
    return lockDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirLockedError) throw new StartError(err.message);
    throw new StartError(`data directory ${dataDir}: cannot take its lock: ${(err as { code?: string }).code ?? String(err)}`);
  }
}

async function serveBoxApi(db: Db, dataDir: string, config: Config, log: Logger, backups: ReturnType<typeof createBackupJob>,
  screens: ScreensBootstrap | undefined): Promise<Box> {
  const now = nowMs;
  // Commands and tokens commit without their own fsync; one fsync of the WAL off the event loop makes what
  // committed meanwhile durable before any answer or frame goes out (docs/operations.md "Durability and speed").
  // The metrics come later (they read parts made below); they observe the fsyncs from then on.
  let onWalSync: ((seconds: number) => void) | undefined;
  const walSync = createWalSync(join(dataDir, `${DB_FILE}-wal`), {
    // docs/operations.md "Durability and speed": nothing may be confirmed after a failed fsync.
    failed(err) {
      log.fatal({ err }, 'the WAL could not be synced to the disk: stopping, so that nothing unsynced is confirmed');
      process.exit(70);
    },
    callbackThrew: (err) => log.error({ err }, 'answering after an fsync failed'),
    synced: (seconds) => onWalSync?.(seconds),
  });
  // The same fsync before a token is answered, a ticket printed or an event sent to the central.
  const durable = durableWrites(db, walSync);
  const auth = createAuthService(createAuthRepo(db), loadOrCreateKey(dataDir), {
    durable,
    accessTtlSeconds: config.auth.accessTokenTtlSeconds,
    refreshTtlMs: config.auth.refreshTokenTtlDays * 86_400_000,
    refreshRetryGraceMs: config.auth.refreshRetryGraceSeconds * 1000,
    throttle: config.auth.throttle,
    anonymous: {
      perAddressPerMinute: config.auth.anonymous.perAddressPerMinute,
      idleRefreshMs: config.auth.anonymous.idleRefreshHours * 3_600_000,
    },
    now,
  });
  const venues = createVenueRepo(db);
  const menuRepo = createMenuRepo(db);
  const syncRepo = createSyncRepo(db);
  const catalogueRepo = createCatalogueRepo(db);
  const outbox = createOutbox(syncRepo);
  const soldOut = createSoldOutFlags(db, menuRepo, venues, outbox);
  const menus = createMenuService(menuRepo, venues, soldOut);
  const events = createEventStore(db);
  const orderRepo = createOrderRepo(db);
  const printRepo = createPrintRepo(db);
  // Pushes go through `publisher`, created below with `server`; the spooler only pushes once started.
  const spooler = createSpooler({
    repo: printRepo, printers: config.printers, options: config.printing, log, now, synced: durable.synced,
    onStatus: publishPrinterStatus({ repo: printRepo, events, push: (frames) => publisher.publish(frames) }),
  });
  const printing = createPrintingService({ repo: printRepo, printers: config.printers, spooler, now });
  const ordering = createOrderingService({
    repo: orderRepo, venues, menus, soldOut, printJobs: createPrintJobs(printing), events, outbox, source: 'venue-box',
    bounds: { maxLines: config.ordering.maxLines, maxOpenPerAnonymousUser: config.ordering.maxOpenPerAnonymousUser },
    customerCommandRate: config.ordering.customerCommandRate,
    now,
  });
  const warehouseRepo = createWarehouseRepo(db);
  const warehouse = createWarehouseService({
    repo: warehouseRepo, outbox, now, lockTtlMs: config.warehouse.lockTtlMinutes * 60_000,
  });

  let accepting = true;
  const mediaStore = createMediaStore(dataDir);
  const disk = createDiskWatchdog({
    dir: dataDir, minFreeBytes: config.storage.minFreeBytes, warnFreeBytes: config.storage.warnFreeBytes, log, now,
  });
  const retention = createRetention({
    pruneCommands: orderRepo.pruneProcessedCommands, commandRetentionMs: config.storage.commandRetentionDays * 86_400_000,
    log, now,
  });
  const bearerOf = (req: HttpRequest) => /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  const authenticate = (req: HttpRequest) => auth.verify(bearerOf(req));
  // Browsers cannot set headers on a WebSocket, so the socket alone also takes `?access_token=`; HTTP calls
  // do not, as query strings end up in proxy and access logs.
  const authenticateSocket = (req: HttpRequest) =>
    auth.verify(req.headers.authorization ? bearerOf(req) : (req.query.get('access_token') ?? undefined));
  // Read at scrape time only (docs/operations.md "Health: metrics, readiness and the watchdog"); `server` and `queue` exist by then.
  const metrics = config.metrics.enabled ? createBoxMetrics({
    version: pkg.version, commandKinds: COMMAND_KINDS,
    queueDepth: orderRepo.pendingCount,
    socketsOpen: () => server.hub.socketCount(), socketBufferedBytes: () => server.hub.bufferedBytes(),
    printers: () => printing.printerHealth(),
    sync() {
      const s = syncStatus(syncRepo, dataDir, now());
      return { enrolled: s.central !== null, backlog: s.backlog, oldestUnsyncedAgeS: s.oldestUnsyncedAgeS,
        lastSuccessMs: s.lastSuccessAt === null ? null : Date.parse(s.lastSuccessAt), deadLetters: s.deadLetters };
    },
    disk() {
      disk.full();
      return { freeBytes: disk.freeBytes(), level: disk.level(), minFreeBytes: config.storage.minFreeBytes, warnFreeBytes: config.storage.warnFreeBytes };
    },
  }) : undefined;
  onWalSync = metrics?.onWalSync;
  const ready = () => readiness(!accepting, () => ({
    schemaVersion: db.pragma('user_version', { simple: true }) as number, latestSchema: MIGRATIONS.at(-1)!.version,
    readOnly: db.readonly, disk: disk.full() ? 'full' : disk.level(), queueFailing: queue.failing(),
  }));
  const server = createServer(
    [
      ...authRoutes(auth), ...venueRoutes(venues), ...menuRoutes(menus), ...soldOutRoutes(soldOut, now),
      ...orderingRoutes(ordering), ...warehouseRoutes(warehouse), ...printingRoutes(printing),
      ...syncRoutes(() => syncStatus(syncRepo, dataDir, now(), catalogueRepo)), ...mediaRoutes(mediaStore),
      ...healthRoutes({ metrics, allow: createAddressList(config.metrics.allowAddresses), authenticate, readiness: ready }),
      ...(config.screens.enabled ? screensRoutes(screens) : []),
    ],
    {
      log, events, authenticate, authenticateSocket, authorizeVenue: ordering.authorizeVenue, maxBodyBytes: config.http.maxBodyBytes,
      corsOrigins: config.http.corsOrigins,
      sockets: config.sockets,
      accepting: () => accepting, storage: disk,
      contracts: { title: 'venue-box', version: pkg.version, description: API_DESCRIPTION },
    },
    config.screens.enabled ? webFiles(log) : undefined,
  );
  const publisher = createPublisher(walSync, server.hub);
  // What headquarters sent down reports back up (docs/sync.md "Orders created at the central").
  const reportInbox = (tenantId: string, body: InboxResultBody, nowMs: number) => outbox.append(tenantId, 'inbox.result', body.entry, body, nowMs);
  const queue = createCommandQueue({
    repo: orderRepo, handler: reportCentralOrders(ordering.handler, reportInbox), publisher, log, now, observer: metrics?.observer,
    // The printers take the print jobs of applied commands once those are on the disk.
    onApplied: () => spooler.wake(),
  });
  ordering.attachQueue(queue);
  backfillOutbox(db, syncRepo, log, () => ({
    orders: ordering.backfillSync(now()), documents: warehouse.backfillSync(), soldOut: soldOut.backfillSync(now()),
  }));

  const sender = createSender({
    repo: syncRepo, dataDir, log, now, version: pkg.version, synced: durable.synced,
    options: {
      flushDelayMs: config.sync.flushDelayMs, retryMinMs: config.sync.retryMinMs, retryMaxMs: config.sync.retryMaxMs,
      heartbeatMs: config.sync.heartbeatSeconds * 1000, requestTimeoutMs: config.sync.requestTimeoutSeconds * 1000,
      enrolPollMs: 5000,
    },
    signerFor: (device) => deviceSigner(device.secretKey),
    restore: createRestoreApplier({
      order: ordering.restore, document: warehouse.restoreDocument, warehouse: warehouse.restoreWarehouse,
      soldOut: (tenantId, body) => soldOut.restore(tenantId, body, now()),
      savepoint: (fn) => db.transaction(fn)(),
    }, log),
  });
  outbox.onAppend(() => sender.wake());
  const mediaFetcher = createMediaFetcher({
    dataDir, repo: createMediaRepo(db), store: mediaStore, log, diskFull: () => disk.full(),
    options: {
      maxBytes: config.sync.mediaMaxBytes, requestTimeoutMs: config.sync.requestTimeoutSeconds * 1000,
      retryMinMs: config.sync.retryMinMs, retryMaxMs: config.sync.retryMaxMs,
    },
  });
  const provisioningRepo = createProvisioningRepo(db);
  const puller = createPuller({
    dataDir, log, state: catalogueRepo.state, setError: (message) => catalogueRepo.setError(message, now()),
    options: {
      waitSeconds: config.sync.catalogueWaitSeconds, requestTimeoutMs: config.sync.requestTimeoutSeconds * 1000,
      retryMinMs: config.sync.retryMinMs, retryMaxMs: config.sync.retryMaxMs, enrolPollMs: 5000,
    },
    apply: (tenantId, res) => applyCentralAnswer({
      catalogue: {
        catalogue: catalogueRepo, provisioning: provisioningRepo, now,
        revokeUser: auth.revokeUserTokens, noteRevoked: auth.noteRevoked,
        menuChanged: (t, venue, event) => events.append(t, venueStream(venue), event, now()),
        push: (frames) => publisher.publish(frames),
      },
      inbox: {
        savepoint: (fn) => db.transaction(fn)(), now, report: reportInbox, log,
        venueWarehouse: (t, venueId) => venues.getVenue(t, venueId)?.warehouse,
        documentKnown: warehouseRepo.hasDocument,
        bookDocument: (t, userId, warehouseId, doc) => void warehouse.postDocument({ tenantId: t, userId }, warehouseId, doc),
        orderKnown: (t, id) => orderRepo.order(t, id) !== undefined,
        queueCommand: (cmd) => orderRepo.insertCommand(cmd),
      },
      afterCommit: () => {
        void queue.drain();
        mediaFetcher.wake();
      },
    }, tenantId, res),
  });

  const checkpointer = createCheckpointer(db, join(dataDir, DB_FILE), {
    intervalMs: 250, walBytes: CHECKPOINT_WAL_BYTES,
    onError: (err) => log.error({ err }, 'WAL checkpoint failed'), onCheckpoint: metrics?.onCheckpoint,
    onRestartError: (err) => log.warn({ err }, 'the checkpointer could not restart the WAL; the next commit does'),
    onWorker: (running) => log.debug(running ? 'the checkpointer\'s thread started' : 'the checkpointer\'s thread is gone'),
    writes: queue,
    // Order confirmations wait while the worker restarts the WAL: a card slow to sync shows here first.
    onSlowHold: (heldMs) =>
      log.warn({ heldMs: Math.round(heldMs) }, 'order confirmations are waiting for the WAL restart: the storage is slow to sync'),
    onHeld: (seconds, slow) => {
      metrics?.onQueueHeld(seconds);
      if (slow) log.warn({ heldMs: Math.round(seconds * 1000) }, 'order confirmations waited for the WAL restart');
    },
  });
  const jobs = createJobs({
    config, log, now, auth, ordering, events, warehouse, retention, disk, syncRepo, backups,
    syncStatus: () => syncStatus(syncRepo, dataDir, now(), catalogueRepo),
  });
  const listener: Service = {
    start() {},
    // No new requests (503 unavailable); confirmations already in this tick commit and their replies go out.
    async drain() {
      accepting = false;
      server.stopListening();
      await pause(20);
    },
    stop() {},
  };
  const sockets: Service = {
    start() {},
    // The frames of the last commands go out before the sockets close.
    drain: () => pause(20),
    stop: () => server.hub.closeAll(CLOSE_STOPPING, 'venue-box is stopping'),
  };

  // The queue first applies the commands confirmed before a crash or power cut, then the printers start (every
  // job of those commands is in the database by now), then sync, the checkpointer and the scheduled jobs.
  for (const service of [queue, spooler, sender, puller, mediaFetcher, checkpointer, jobs]) await service.start();
  /**
   * Shutdown, in order (docs/printing.md "Command line"): each part takes nothing new and finishes what it accepted, then
   * stops. A command confirmed is applied; a print job's write in flight finishes (and is recorded) or is
   * abandoned unrecorded, never marked without a drain; a backup in flight removes its temp files.
   */
  const stopping: NamedService[] = [
    { name: 'http', service: listener },
    { name: 'jobs', service: jobs },
    { name: 'checkpointer', service: checkpointer },
    { name: 'command queue', service: queue },
    { name: 'spooler', service: spooler },
    { name: 'sync sender', service: sender },
    { name: 'catalogue puller', service: puller },
    { name: 'menu images', service: mediaFetcher },
    { name: 'sockets', service: sockets },
  ];

  const port = await server.listen(config.host, config.port);
  log.info({ address: `http://${config.host}:${port}`, host: config.host, port, dataDir }, 'venue-box listening');

  return {
    port,
    db,
    async stop() {
      await stopInOrder(stopping);
      await walSync.close();
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
      metrics?.close();
      log.info('venue-box stopped');
    },
  };
}

/** The screens' files (README "Screens"); a checkout that has not built them serves the API alone. */
function webFiles(log: Logger): ReturnType<typeof loadWebFiles> {
  const files = loadWebFiles();
  if (!files.has('index.html')) log.warn('screens: no web files found (npm run build writes dist/web): / is not served');
  return files;
}

/**
 * Decided (docs/sync.md "Sync to the central node"): a box upgraded to sync puts what it already holds into the
 * outbox once, in one transaction before it serves (orders as they now are, every stock document with its
 * ledger rows, the sold-out flags), so headquarters sees its history and the central's stock equals the box's.
 */
function backfillOutbox(db: Db, repo: ReturnType<typeof createSyncRepo>, log: Logger, run: () => Record<string, number>): void {
  if (repo.state().backfilled) return;
  const counts = db.transaction(() => {
    const c = run();
    repo.markBackfilled();
    return c;
  }).immediate();
  if (Object.values(counts).some((n) => n > 0)) log.info(counts, 'sync: what this box held before was put into the outbox once');
}

/**
 * Creates the data directory one level at a time: Node 20's recursive mkdirSync spins forever on paths such
 * as /proc/x instead of failing, and a box that hangs at start is worse than one that says why it stopped.
 */
export function prepareDataDir(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d) && dirname(d) !== d; d = dirname(d)) missing.unshift(d);
  try {
    for (const d of missing) mkdirSync(d, { mode: 0o750 });
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new StartError(`data directory ${dir} is not writable: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}
