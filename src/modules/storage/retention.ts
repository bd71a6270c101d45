import type { Logger } from '../../log.js';

export interface RetentionDeps {
  /** Removes up to `limit` order commands processed before `beforeMs`; returns how many (ordering's repo). */
  pruneCommands(beforeMs: number, limit: number): number;
  commandRetentionMs: number;
  log: Logger;
  now(): number;
}

/**
 * Rows per statement. Each delete is its own commit (one fsync) on the serving thread; between batches the
 * event loop serves requests, so a first run after an upgrade (months of commands) never stalls it for long.
 */
const BATCH = 1000;

/**
 * Keeps the order command log bounded: a processed command is only needed until it is applied (its order
 * holds the result, its Idempotency-Key row holds its own confirmation), so it goes after
 * storage.commandRetentionDays, kept that long to explain an order's history when asked. SQLite reuses the
 * freed pages for new rows without a VACUUM, so the file stops growing by the commands' share.
 */
export function createRetention(deps: RetentionDeps) {
  let running = false;
  return {
    /** One sweep; returns how many commands it removed (0 when a sweep is already running). */
    async pruneCommands(): Promise<number> {
      if (running) return 0;
      running = true;
      const before = deps.now() - deps.commandRetentionMs;
      let removed = 0;
      try {
        for (let n = BATCH; n === BATCH; removed += n) {
          n = deps.pruneCommands(before, BATCH);
          if (n === BATCH) await new Promise((r) => setImmediate(r));
        }
      } catch (err) {
        // A full disk or a busy database: what is left goes at the next sweep.
        deps.log.error({ err, removed }, 'removing old order commands failed');
      } finally {
        running = false;
      }
      if (removed > 0) deps.log.info({ removed }, 'processed order commands past storage.commandRetentionDays removed');
      return removed;
    },
  };
}
