import cron, { type ScheduledTask } from 'node-cron';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import type { AuthService } from './modules/auth/service.js';
import type { createBackupJob } from './modules/backup/service.js';
import type { EventStore } from './modules/events/event-store.js';
import type { OrderingService } from './modules/ordering/service.js';
import type { createDiskWatchdog } from './modules/storage/disk-watchdog.js';
import type { createRetention } from './modules/storage/retention.js';
import type { SyncRepo } from './modules/sync/repo.js';
import { staleWarning, type SyncStatus } from './modules/sync/status.js';
import type { WarehouseService } from './modules/warehouse/service.js';
import { type Service, serviceOf } from './shared/runtime.js';

export interface JobDeps {
  config: Config;
  log: Logger;
  now(): number;
  auth: AuthService;
  ordering: OrderingService;
  events: EventStore;
  warehouse: WarehouseService;
  retention: ReturnType<typeof createRetention>;
  disk: ReturnType<typeof createDiskWatchdog>;
  syncRepo: SyncRepo;
  syncStatus(): SyncStatus;
  backups: ReturnType<typeof createBackupJob>;
}

/**
 * The box's scheduled jobs (node-cron, each without overlap): hourly sweeps at their own minutes so they never
 * run together, the minute's disk look and stock-lock sweep, and the backup on `backup.schedule` (docs/operations.md
 * "Backups and restore", "Storage: a full disk, and what is kept how long"). Stopping ends every schedule and
 * waits for a backup in flight to remove its temp files.
 */
export function createJobs(deps: JobDeps): Service {
  const { config, log, now } = deps;
  let jobs: ScheduledTask[] = [];
  return serviceOf({
    start() {
      jobs = [
        cron.schedule(
          '17 * * * *',
          () => {
            // An idle anonymous user keeps its refresh tokens while any order lists it (the ordering module knows).
            const removed = deps.auth.sweepExpired((tenantId, userId) => deps.ordering.userHasOrder(tenantId, userId));
            log.info({ removed }, 'expired refresh tokens and revocations removed');
          },
          { name: 'refresh-token-sweep', noOverlap: true },
        ),
        cron.schedule(
          '23 * * * *',
          () => {
            const at = now();
            const removed = deps.events.pruneBefore(at - config.events.retentionHours * 3_600_000, at);
            log.info({ removed }, 'old socket events removed');
          },
          { name: 'event-prune', noOverlap: true },
        ),
        cron.schedule(
          '29 * * * *',
          () => {
            const removed = deps.ordering.pruneIdempotencyKeys(now() - config.ordering.idempotencyHours * 3_600_000);
            if (removed > 0) log.info({ removed }, 'expired Idempotency-Keys removed');
          },
          { name: 'idempotency-prune', noOverlap: true },
        ),
        cron.schedule('35 * * * *', () => deps.retention.pruneCommands(), {
          name: 'command-retention',
          noOverlap: true,
        }),
        // Requests look at the disk only when they write; this look makes the low-space warning come on an idle box too.
        cron.schedule('* * * * *', () => deps.disk.full(), { name: 'disk-watch', noOverlap: true }),
        cron.schedule(
          '*/10 * * * *',
          () => {
            const stale = staleWarning(deps.syncStatus(), config.sync.warnAfterHours);
            if (stale) log.warn(stale, 'unsynced data is older than sync.warnAfterHours');
          },
          { name: 'sync-age-warning', noOverlap: true },
        ),
        cron.schedule(
          '41 * * * *',
          () => {
            const removed = deps.syncRepo.prune(
              deps.syncRepo.state().ackedSeq,
              now() - config.sync.retentionDays * 86_400_000,
            );
            if (removed > 0) log.info({ removed }, 'acknowledged sync events past retention removed');
          },
          { name: 'sync-retention', noOverlap: true },
        ),
        // Expired stock locks already count for nothing; the sweep only keeps the table small.
        cron.schedule(
          '* * * * *',
          () => {
            const removed = deps.warehouse.sweepExpiredLocks();
            if (removed > 0) log.info({ removed }, 'expired stock locks removed');
          },
          { name: 'lock-sweep', noOverlap: true },
        ),
      ];
      if (config.backup.enabled) {
        jobs.push(cron.schedule(config.backup.schedule, () => deps.backups.run(), { name: 'backup', noOverlap: true }));
      }
    },
    async stop() {
      for (const job of jobs) await job.destroy();
      await deps.backups.stop();
    },
  });
}
