import type { Config } from '../config.js';
import type { Db } from '../db/open.js';
import { createJobs } from '../jobs.js';
import type { Logger } from '../log.js';
import type { AuthService } from '../modules/auth/service.js';
import { createBackupJob } from '../modules/backup/service.js';
import { venueStream } from '../modules/events/event-store.js';
import type { Publisher } from '../modules/events/publisher.js';
import { createMediaFetcher } from '../modules/media/fetcher.js';
import type { createDiskWatchdog } from '../modules/storage/disk-watchdog.js';
import { createRetention } from '../modules/storage/retention.js';
import { createReinstater } from '../modules/sync/reconcile/applier.js';
import { applyCentralAnswer } from '../modules/sync/catalogue/central-answer.js';
import { createPuller } from '../modules/sync/catalogue/puller.js';
import { createSender } from '../modules/sync/up/sender.js';
import { deviceSigner } from '../modules/sync/enrolment/signer.js';
import { syncStatus } from '../modules/sync/status.js';
import { type BoxMetrics, registerSyncGauges } from '../modules/health/metrics.js';
import { createUpdateAgent } from '../modules/update/agent.js';
import { createUpdateRepo } from '../modules/update/repo.js';
import { localMinutes, venuesClosed } from '../modules/update/window.js';
import { thisProgram } from '../modules/update/program.js';
import type { Domain, Repos } from './domain.js';
import pkg from '../../package.json';

export interface BackgroundDeps {
  config: Config;
  log: Logger;
  db: Db;
  dataDir: string;
  /** The --config file, read again by the scheduled backup (src/modules/backup/service.ts). */
  configFile: string | undefined;
  repos: Repos;
  auth: AuthService;
  domain: Domain;
  publisher: Publisher;
  disk: ReturnType<typeof createDiskWatchdog>;
  /** Resolves once what committed so far is on the disk (src/db/wal-sync.ts durableWrites). */
  synced(): Promise<void>;
  metrics: BoxMetrics | undefined;
  now(): number;
}

/**
 * The parts that work on their own: the three loops to the central (sync up, the catalogue down, menu images)
 * and the scheduled jobs. Each is a Service for the runtime (src/shared/runtime.ts).
 */
export function createBackground(d: BackgroundDeps) {
  const { config, log, db, dataDir, repos, domain, now } = d;
  const { ordering, warehouse, soldOut } = domain;
  const requestTimeoutMs = config.sync.requestTimeoutSeconds * 1000;
  const enrolPollMs = config.sync.enrolPollSeconds * 1000;
  const savepoint = <T>(fn: () => T): T => db.transaction(fn)();

  // Declared before the sender, which reports its state in every hello (docs/operations.md "Updating boxes").
  const updates = createUpdateAgent({
    dataDir,
    log,
    now,
    options: { ...config.update, requestTimeoutMs },
    program: thisProgram(),
    repo: createUpdateRepo(db),
    venuesClosed: (ms) => venuesClosed(repos.venues.allVenues(), ms),
    localMinutes: (ms) => localMinutes(repos.venues.allVenues(), ms),
    changed: () => sender.helloSoon(),
  });
  const sender = createSender({
    repo: repos.sync,
    updateReport: updates.report,
    dataDir,
    log,
    now,
    version: pkg.version,
    synced: d.synced,
    options: {
      flushDelayMs: config.sync.flushDelayMs,
      retryMinMs: config.sync.retryMinMs,
      retryMaxMs: config.sync.retryMaxMs,
      heartbeatMs: config.sync.heartbeatSeconds * 1000,
      requestTimeoutMs,
      enrolPollMs,
    },
    signerFor: (device) => deviceSigner(device.secretKey),
    reinstate: createReinstater(
      {
        order: ordering.reinstateOrder,
        document: warehouse.reinstateDocument,
        warehouse: warehouse.reinstateWarehouse,
        soldOut: (tenantId, body) => soldOut.reinstate(tenantId, body, now()),
        savepoint,
      },
      log,
    ),
  });
  repos.outbox.onAppend(() => sender.wake());
  if (d.metrics) {
    registerSyncGauges(d.metrics, () => {
      const s = syncStatus(repos.sync, dataDir, now());
      return {
        enrolled: s.central !== null,
        backlog: s.backlog,
        oldestUnsyncedAgeS: s.oldestUnsyncedAgeS,
        lastSuccessMs: s.lastSuccessAt === null ? null : Date.parse(s.lastSuccessAt),
        deadLetters: s.deadLetters,
      };
    });
  }
  const mediaFetcher = createMediaFetcher({
    dataDir,
    repo: repos.media,
    store: repos.mediaStore,
    log,
    diskFull: () => d.disk.full(),
    options: {
      maxBytes: config.sync.mediaMaxBytes,
      requestTimeoutMs,
      retryMinMs: config.sync.retryMinMs,
      retryMaxMs: config.sync.retryMaxMs,
      enrolPollMs,
    },
  });
  const puller = createPuller({
    dataDir,
    log,
    offer: updates.offer,
    state: repos.catalogue.state,
    setError: (message) => repos.catalogue.setError(message, now()),
    clearError: () => repos.catalogue.clearError(),
    options: {
      waitSeconds: config.sync.catalogueWaitSeconds,
      requestTimeoutMs,
      retryMinMs: config.sync.retryMinMs,
      retryMaxMs: config.sync.retryMaxMs,
      enrolPollMs,
    },
    apply: (tenantId, res) =>
      applyCentralAnswer(
        {
          catalogue: {
            catalogue: repos.catalogue,
            provisioning: repos.provisioning,
            now,
            revokeUser: d.auth.revokeUserTokens,
            revokeGoneClients: d.auth.revokeGoneClientTokens,
            noteRevoked: d.auth.noteRevoked,
            menuChanged: (t, venue, event) => repos.events.append(t, venueStream(venue), event, now()),
            push: (frames) => d.publisher.publish(frames),
          },
          inbox: {
            savepoint,
            now,
            report: domain.reportInbox,
            log,
            venueWarehouse: (t, venueId) => repos.venues.getVenue(t, venueId)?.warehouse,
            documentKnown: repos.warehouse.hasDocument,
            bookDocument: (t, userId, warehouseId, doc) =>
              void warehouse.postDocument({ tenantId: t, userId }, warehouseId, doc),
            orderKnown: (t, id) => repos.orders.order(t, id) !== undefined,
            queueCommand: (cmd) => repos.orders.insertCommand(cmd),
          },
          afterCommit: () => {
            void domain.queue.drain();
            mediaFetcher.wake();
          },
        },
        tenantId,
        res,
      ),
  });

  const retention = createRetention({
    pruneCommands: repos.orders.pruneProcessedCommands,
    commandRetentionMs: config.storage.commandRetentionDays * 86_400_000,
    log,
    now,
  });
  const jobs = createJobs({
    config,
    log,
    now,
    auth: d.auth,
    ordering,
    events: repos.events,
    warehouse,
    retention,
    disk: d.disk,
    syncRepo: repos.sync,
    backups: createBackupJob({ dataDir, configFile: d.configFile, log }),
    syncStatus: () => syncStatus(repos.sync, dataDir, now(), repos.catalogue),
  });

  // The three loops to the central are Services themselves (docs/sync.md "Talking to the central").
  return { sender, puller, mediaFetcher, jobs, updates };
}
