import type { ErrorCode } from '../../shared/errors.js';
import type { DiskLevel } from '../storage/disk-watchdog.js';

/** What /readyz looks at besides shutdown: state the box already holds, so a probe writes nothing (an SD card wears). */
export interface ReadinessState {
  /** PRAGMA user_version, and the newest migration this program knows. */
  schemaVersion: number;
  latestSchema: number;
  readOnly: boolean;
  disk: DiskLevel;
  /** The command queue's last transaction failed and is being retried (a full disk, an I/O error). */
  queueFailing: boolean;
  /** A service whose failure policy is 'fatal' failed (src/shared/runtime.ts): the process is about to exit. */
  failedService?: string;
}

export type Readiness =
  | { ready: true }
  | { ready: false; code: Extract<ErrorCode, 'unavailable' | 'storageFull'>; reason: string; message: string };

/**
 * Ready means: orders can be taken now. The first reason that says otherwise wins (docs/operations.md "Health"). `look` is
 * not called while stopping: the database may be closed by then.
 */
export function readiness(stopping: boolean, look: () => ReadinessState): Readiness {
  if (stopping) return notReady('unavailable', 'stopping', 'venue-box is shutting down');
  const s = look();
  if (s.failedService !== undefined) {
    return notReady('unavailable', 'serviceFailed', `${s.failedService} failed: venue-box is stopping to be restarted`);
  }
  if (s.schemaVersion !== s.latestSchema) {
    return notReady(
      'unavailable',
      'migrations',
      `database schema is ${s.schemaVersion}, this venue-box needs ${s.latestSchema}`,
    );
  }
  if (s.readOnly) return notReady('unavailable', 'readOnly', 'the database is open read-only');
  if (s.disk === 'full')
    return notReady('storageFull', 'storageFull', 'the data disk is below storage.minFreeBytes: writes are refused');
  if (s.queueFailing)
    return notReady(
      'unavailable',
      'database',
      "the database refuses the command queue's writes; retrying every second",
    );
  return { ready: true };
}

const notReady = (code: 'unavailable' | 'storageFull', reason: string, message: string): Readiness => ({
  ready: false,
  code,
  reason,
  message,
});
