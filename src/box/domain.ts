import type { Config } from '../config.js';
import type { Db } from '../db/open.js';
import type { durableWrites } from '../db/wal-sync.js';
import type { Logger } from '../log.js';
import { createAuthRepo } from '../modules/auth/repo.js';
import { createAuthService } from '../modules/auth/service.js';
import { createEventStore } from '../modules/events/event-store.js';
import type { Publisher } from '../modules/events/publisher.js';
import { type BoxMetrics, registerPrinterGauges, registerQueueGauges } from '../modules/health/metrics.js';
import { createMediaRepo } from '../modules/media/repo.js';
import { createMediaStore } from '../modules/media/store.js';
import { createMenuRepo } from '../modules/menus/repo.js';
import { createMenuService } from '../modules/menus/service.js';
import { createSoldOutFlags } from '../modules/menus/sold-out.js';
import { createCommandQueue } from '../modules/ordering/command-queue.js';
import { createOrderHandler } from '../modules/ordering/handler.js';
import { createPrintJobs } from '../modules/ordering/print-jobs.js';
import { createOrderRepo } from '../modules/ordering/repo.js';
import { createOrderingService } from '../modules/ordering/service.js';
import { createWriteBudget } from '../modules/ordering/write-budget.js';
import { createPrintRepo } from '../modules/printing/repo.js';
import { createPrintingService } from '../modules/printing/service.js';
import { createSpooler } from '../modules/printing/spooler.js';
import { publishPrinterStatus } from '../modules/printing/status-events.js';
import { createProvisioningRepo } from '../modules/provisioning/repo.js';
import { applyProvisioning } from '../modules/provisioning/service.js';
import { provisioningWithout } from '../modules/sync/catalogue/apply.js';
import { createCatalogueRepo } from '../modules/sync/catalogue/repo.js';
import { reportCentralOrders } from '../modules/sync/inbox/orders.js';
import { createOutbox } from '../modules/sync/up/outbox.js';
import { createSyncRepo } from '../modules/sync/repo.js';
import { createVenueRepo } from '../modules/venues/repo.js';
import { createWarehouseRepo } from '../modules/warehouse/repo.js';
import { createWarehouseService } from '../modules/warehouse/service.js';
import type { InboxResultBody } from '../shared/sync-messages.js';
import { loadOrCreateKey } from '../shared/jwt.js';
import { type Service, serviceOf } from '../shared/runtime.js';
import { createRateLimiter } from '../shared/token-bucket.js';

/**
 * Provisioning documents applied at start. A tenant whose catalogue came from the central is the central's: its
 * entry in a provisioning file is skipped.
 */
export function applyProvisioningDocuments(
  db: Db,
  provisioning: { name: string; document: unknown }[],
  log: Logger,
): void {
  const repo = createProvisioningRepo(db);
  const fromCentral = createCatalogueRepo(db).state();
  for (const p of provisioning) {
    const document = provisioningWithout(p.document, fromCentral.rev > 0 ? fromCentral.tenantId : null);
    log.info({ provisioning: p.name, result: applyProvisioning(repo, p.name, document) }, 'provisioning checked');
  }
}

/** Every repository of the box: SQL only, on the one connection. */
export function createRepos(db: Db, dataDir: string) {
  const syncRepo = createSyncRepo(db);
  return {
    venues: createVenueRepo(db),
    menus: createMenuRepo(db),
    sync: syncRepo,
    catalogue: createCatalogueRepo(db),
    outbox: createOutbox(syncRepo),
    events: createEventStore(db),
    orders: createOrderRepo(db),
    prints: createPrintRepo(db),
    warehouse: createWarehouseRepo(db),
    provisioning: createProvisioningRepo(db),
    media: createMediaRepo(db),
    mediaStore: createMediaStore(dataDir),
  };
}
export type Repos = ReturnType<typeof createRepos>;

/** Tokens: made before the sockets, which verify them. */
export function createBoxAuth(
  db: Db,
  dataDir: string,
  config: Config,
  durable: ReturnType<typeof durableWrites>,
  now: () => number,
) {
  return createAuthService(createAuthRepo(db), loadOrCreateKey(dataDir), {
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
}

export interface DomainDeps {
  config: Config;
  log: Logger;
  db: Db;
  repos: Repos;
  /** Sends committed frames to the sockets: made before every service that pushes (src/box/transport.ts). */
  publisher: Publisher;
  durable: ReturnType<typeof durableWrites>;
  metrics: BoxMetrics | undefined;
  now(): number;
  /** This start follows a takeover from a dead primary (src/modules/printing/spooler.ts `tookOver`). */
  tookOver?: boolean;
}

/**
 * The use cases, each made after what it needs: the printers, then the command handler, the queue that applies
 * its commands, and the ordering service that confirms into that queue.
 */
export function createDomain({ config, log, db, repos, publisher, durable, metrics, now, tookOver }: DomainDeps) {
  const { venues, outbox } = repos;
  const soldOut = createSoldOutFlags(db, repos.menus, venues, outbox);
  const menus = createMenuService(repos.menus, venues, soldOut);
  const spooler = createSpooler({
    repo: repos.prints,
    printers: config.printers,
    options: config.printing,
    log,
    now,
    synced: durable.synced,
    tookOver,
    onStatus: publishPrinterStatus({
      repo: repos.prints,
      events: repos.events,
      push: (frames) => publisher.publish(frames),
    }),
  });
  const printing = createPrintingService({ repo: repos.prints, printers: config.printers, spooler, now });
  if (metrics) registerPrinterGauges(metrics, () => printing.printerHealth());

  const orderDeps = {
    repo: repos.orders,
    venues,
    menus,
    soldOut,
    printJobs: createPrintJobs(printing),
    events: repos.events,
    outbox,
    source: 'venue-box',
    now,
    bounds: { maxLines: config.ordering.maxLines, maxOpenPerAnonymousUser: config.ordering.maxOpenPerAnonymousUser },
    customerRate: createRateLimiter(config.ordering.customerCommandRate, now),
    writeBudget: createWriteBudget(
      { perAddress: config.ordering.addressWriteRate, venue: config.ordering.venueWriteRate },
      now,
    ),
  };
  // What headquarters sent down reports back up (docs/sync.md "Orders created at the central").
  const reportInbox = (tenantId: string, body: InboxResultBody, nowMs: number) =>
    outbox.append(tenantId, 'inbox.result', body.entry, body, nowMs);
  const queue = createCommandQueue({
    repo: repos.orders,
    handler: reportCentralOrders(createOrderHandler(orderDeps), reportInbox),
    publisher,
    log,
    now,
    observer: metrics?.observer,
    // The printers take the print jobs of applied commands once those are on the disk.
    onApplied: () => spooler.wake(),
  });
  if (metrics) registerQueueGauges(metrics, repos.orders.pendingCount);
  const ordering = createOrderingService({ ...orderDeps, queue });
  const warehouse = createWarehouseService({
    repo: repos.warehouse,
    outbox,
    now,
    lockTtlMs: config.warehouse.lockTtlMinutes * 60_000,
  });
  backfillOutbox(db, repos.sync, log, () => ({
    orders: ordering.backfillSync(now()),
    documents: warehouse.backfillSync(),
    soldOut: soldOut.backfillSync(now()),
  }));

  /** At start, the commands confirmed before a crash or power cut are applied before anything else runs. */
  const queueService: Service = serviceOf({ start: queue.start, drain: queue.drain, stop: queue.stop });
  /**
   * Started after the queue's replay (every job of those commands is in the database by then). Stopped before the
   * queue (the reverse order), so its drain is the queue's: the last confirmed commands are applied, and their
   * tickets woken, while the printers still run. At shutdown a print job's write in flight finishes (and is
   * recorded) or is abandoned unrecorded (docs/printing.md "How printing behaves").
   */
  const spoolerService: Service = serviceOf({
    start: () => spooler.start(),
    drain: () => queue.drain(),
    stop: () => spooler.stop(),
  });
  return { soldOut, menus, spooler, printing, queue, ordering, warehouse, reportInbox, queueService, spoolerService };
}
export type Domain = ReturnType<typeof createDomain>;

/**
 * Decided (docs/sync.md "Sync to the central node"): a box upgraded to sync puts what it already holds into the
 * outbox once, in one transaction before it serves (orders as they now are, every stock document with its
 * ledger rows, the sold-out flags), so headquarters sees its history and the central's stock equals the box's.
 */
function backfillOutbox(db: Db, repo: Repos['sync'], log: Logger, run: () => Record<string, number>): void {
  if (repo.state().backfilled) return;
  const counts = db
    .transaction(() => {
      const c = run();
      repo.markBackfilled();
      return c;
    })
    .immediate();
  if (Object.values(counts).some((n) => n > 0))
    log.info(counts, 'sync: what this box held before was put into the outbox once');
}
