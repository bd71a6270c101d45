import { isoOf } from '../../shared/clock.js';
import { loadDevice } from './enrolment/device.js';
import type { CatalogueRepo } from './catalogue/repo.js';
import type { SyncRepo } from './repo.js';

/** What `GET /sync-api/api/status` and `venue-box sync status --json` show (docs/sync.md "Sync to the central node"). */
export interface SyncStatus {
  central: string | null;
  deviceId: string | null;
  tenant: string | null;
  venue: string | null;
  /** Events not yet acknowledged by the central. */
  backlog: number;
  oldestUnsyncedAgeS: number | null;
  lastSuccessAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  deadLetters: number;
  epoch: number;
  ackedSeq: number;
  newestSeq: number;
  /** Down: the catalogue from the central (docs/sync.md "Down: the catalogue"). */
  catalogue: {
    /** The central's rev this box serves; 0 before the first snapshot. */
    rev: number;
    checksum: string | null;
    appliedAt: string | null;
    /** The last change set that could not be applied (or poll that failed); cleared by the next applied one. */
    lastError: string | null;
    lastErrorAt: string | null;
  } | null;
}

export function syncStatus(repo: SyncRepo, dataDir: string, nowMs: number, catalogueRepo?: CatalogueRepo): SyncStatus {
  const c = catalogueRepo?.state();
  const device = loadDevice(dataDir);
  const state = repo.state();
  const backlog = repo.backlog(state.ackedSeq);
  return {
    central: device?.central ?? null,
    deviceId: device?.deviceId ?? null,
    tenant: device?.tenant ?? null,
    venue: device?.venue ?? null,
    backlog: backlog.count,
    oldestUnsyncedAgeS: backlog.oldestMs === null ? null : Math.max(0, Math.floor((nowMs - backlog.oldestMs) / 1000)),
    lastSuccessAt: state.lastSuccessMs === null ? null : isoOf(state.lastSuccessMs),
    lastError: state.lastError,
    lastErrorAt: state.lastError === null || state.lastErrorMs === null ? null : isoOf(state.lastErrorMs),
    deadLetters: repo.deadLetterCount(),
    epoch: state.epoch,
    ackedSeq: state.ackedSeq,
    newestSeq: repo.last()?.seq ?? 0,
    catalogue: c
      ? {
          rev: c.rev,
          checksum: c.checksum,
          appliedAt: c.appliedMs === null ? null : isoOf(c.appliedMs),
          lastError: c.lastError,
          lastErrorAt: c.lastError === null || c.lastErrorMs === null ? null : isoOf(c.lastErrorMs),
        }
      : null,
  };
}

/** The warning fields while unsynced data is older than `warnAfterHours`; undefined while it is not. */
export function staleWarning(status: SyncStatus, warnAfterHours: number): Record<string, unknown> | undefined {
  if (status.oldestUnsyncedAgeS === null || status.oldestUnsyncedAgeS <= warnAfterHours * 3600) return undefined;
  return {
    backlog: status.backlog,
    oldestUnsyncedAgeS: status.oldestUnsyncedAgeS,
    central: status.central,
    lastError: status.lastError,
  };
}
