import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { SyncStatus } from '../../src/modules/sync/status.js';
import type { TestBox } from './box.js';
import { runCliAsync } from './cli.js';

/** Sync options that keep tests quick: short flush delay, short backoff, a hello every second. */
export const FAST_SYNC = {
  sync: { flushDelayMs: 20, retryMinMs: 100, retryMaxMs: 1000, heartbeatSeconds: 1, requestTimeoutSeconds: 10 },
};

/** Runs `venue-box sync ARGS` (the bundle) and returns its exit code and output. */
export const syncCli = (args: string[]) => runCliAsync(['sync', ...args]);

export async function enrol(box: { dataDir: string }, centralUrl: string, code: string): Promise<void> {
  const r = await syncCli(['enrol', '--data-dir', box.dataDir, '--central', centralUrl, '--code', code]);
  if (r.code !== 0) throw new Error(`sync enrol exited ${r.code}: ${r.stderr}`);
}

/** What `venue-box sync status --json` prints. */
export type StatusJson = SyncStatus;

export async function syncStatus(box: { dataDir: string }): Promise<StatusJson> {
  const r = await syncCli(['status', '--data-dir', box.dataDir, '--json']);
  if (r.code !== 0) throw new Error(`sync status exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as StatusJson;
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `ms`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 30_000,
): Promise<T> {
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until the box's whole outbox is acknowledged. */
export const drained = (box: { dataDir: string }, ms = 60_000): Promise<StatusJson> =>
  waitFor(
    'the outbox to drain',
    async () => {
      const s = await syncStatus(box);
      return s.backlog === 0 && s.ackedSeq === s.newestSeq && s.newestSeq > 0 ? s : undefined;
    },
    ms,
  );

/** The box's outbox rows (read-only connection beside the running box). */
export function outboxOf(
  box: TestBox | { dataDir: string },
): { seq: number; kind: string; aggregate_id: string; event_id: string }[] {
  const db = new Database(join(box.dataDir, 'venue-box.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT seq, kind, aggregate_id, event_id FROM sync_outbox ORDER BY seq').all() as never;
  } finally {
    db.close();
  }
}

/** Every order of a venue at the central, following `next` cursors. */
export async function hqOrders(central: { hq(path: string): Promise<any> }, venueId: string): Promise<any[]> {
  const all: any[] = [];
  let after: string | null = null;
  do {
    const page: { items: any[]; next: string | null } = await central.hq(
      `/hq-api/api/orders?venueId=${venueId}&limit=200${after ? `&after=${after}` : ''}`,
    );
    all.push(...page.items);
    after = page.next;
  } while (after);
  return all;
}
