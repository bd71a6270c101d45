import pg from 'pg';
import type { Logger } from '../../../log.js';
import { type CatalogueResponse, catalogueChecksum } from '../../../shared/catalogue-protocol.js';
import type { Pool } from '../../db/pool.js';
import { createInboxRepo } from '../inbox/repo.js';
import { createCatalogueRepo } from './repo.js';

/** How often the LISTEN connection is checked, and how long the check may take. */
const HEARTBEAT_MS = 15_000;
const HEARTBEAT_TIMEOUT_MS = 5000;

/**
 * Wakes the long polls of a tenant when its catalogue changes. PostgreSQL's LISTEN on a connection of its own
 * (not the pool's): a change committed by `central import` in another process, or by a second central on the
 * same database, wakes these boxes too. While that connection is down, polls end at their own timeout.
 */
export function createNotifier(url: string, log: Logger) {
  const waiters = new Map<string, Set<() => void>>();
  /** Bumped by every notification of a tenant (and every reconnect): a read begun before it may be stale. */
  const generations = new Map<string, number>();
  let reconnects = 0;
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const wake = (tenantId: string) => {
    generations.set(tenantId, (generations.get(tenantId) ?? 0) + 1);
    for (const w of waiters.get(tenantId) ?? []) w();
    waiters.delete(tenantId);
  };
  const wakeAll = () => {
    reconnects++;
    for (const t of [...waiters.keys()]) wake(t);
  };

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: url, query_timeout: HEARTBEAT_TIMEOUT_MS });
    c.on('notification', (n) => {
      if (n.channel === 'catalogue' && n.payload) wake(n.payload);
    });
    const lost = (err: Error) => {
      if (client !== c || closed) {
        clearInterval(heartbeat);
        return;
      }
      log.warn({ err: err.message }, 'catalogue listener lost its connection; reconnecting');
      clearInterval(heartbeat);
      void c.end().catch(() => undefined);
      client = undefined;
      schedule();
    };
    c.on('error', lost);
    // A connection whose server vanished without a word (a host gone, a network cut) shows no error until
    // something is sent: a query now and then finds it, so changes are not missed for long.
    const heartbeat = setInterval(() => {
      c.query('SELECT 1').catch((err: unknown) => lost(err as Error));
    }, HEARTBEAT_MS);
    heartbeat.unref();
    try {
      await c.connect();
      await c.query('LISTEN catalogue');
      if (closed) {
        clearInterval(heartbeat);
        return void (await c.end());
      }
      client = c;
      // A change may have committed while no one listened: every waiting box asks again.
      wakeAll();
    } catch (err) {
      clearInterval(heartbeat);
      await c.end().catch(() => undefined);
      log.warn({ err: (err as Error).message }, 'catalogue listener could not connect; retrying');
      schedule();
    }
  }
  function schedule(): void {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, 1000);
    retry.unref();
  }

  return {
    start: connect,
    /** Changes to the tenant's catalogue notified so far (with reconnects): reads may be shared within one. */
    generation: (tenantId: string): string => `${reconnects}/${generations.get(tenantId) ?? 0}`,
    /**
     * A wait for the tenant's next change, registered before the caller reads (so a change committed between
     * the read and the wait still wakes it); resolves on a change, after `ms`, or when the central stops.
     */
    waiter(tenantId: string, ms: number): { done: Promise<void>; cancel(): void } {
      let wakeUp!: () => void;
      const done = new Promise<void>((resolve) => {
        wakeUp = resolve;
      });
      const set = waiters.get(tenantId) ?? new Set();
      waiters.set(tenantId, set);
      set.add(wakeUp);
      const timer = setTimeout(wakeUp, ms);
      const cancel = () => {
        clearTimeout(timer);
        set.delete(wakeUp);
        if (set.size === 0 && waiters.get(tenantId) === set) waiters.delete(tenantId);
      };
      void done.then(cancel);
      if (closed) wakeUp();
      return { done, cancel };
    },
    /** Whether the LISTEN connection is up (shown on /readyz; while it is down, long polls end at their timeout). */
    listening: (): boolean => client !== undefined,
    async close(): Promise<void> {
      closed = true;
      clearTimeout(retry);
      wakeAll();
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
export type Notifier = ReturnType<typeof createNotifier>;

/**
 * What a box receives: the rows changed after its cursor, or a snapshot, with the checksum at the answer's rev.
 * Read in one REPEATABLE READ transaction, so the rev, the rows and the checksum are of the same moment.
 */
export function createCatalogueFeed(pool: Pool, notifier: Notifier) {
  /** Checksum of the newest rev seen per tenant: every box of the tenant asks for the same one. */
  const checksums = new Map<string, { rev: number; checksum: string }>();
  let inFlight = 0;
  const idleWaiters: (() => void)[] = [];

  /**
   * Reads of the same (tenant, cursor, mode) under way: a change wakes every box of the tenant at once, and they
   * mostly ask from the same cursor, so one read answers them all instead of each queueing for a connection.
   */
  const reading = new Map<string, Promise<CatalogueResponse>>();
  const computing = new Map<string, Promise<string>>();
  function sharedRead(tenantId: string, after: number, forceSnapshot: boolean): Promise<CatalogueResponse> {
    // A poll registers its wait before it reads, so a change after its read wakes it. A read begun before a
    // notification it has not seen may miss that change: only a read of the current generation is joined.
    const key = `${tenantId}\0${after}\0${forceSnapshot}\0${notifier.generation(tenantId)}`;
    let p = reading.get(key);
    if (!p) {
      p = readCatalogue(tenantId, after, forceSnapshot).finally(() => reading.delete(key));
      reading.set(key, p);
    }
    return p;
  }

  /**
   * `venueId`: the asking box's venue, whose entries from headquarters come with the answer: those after its
   * cursor up to the answer's rev (entries commit in rev order with the catalogue, so none at or below that rev
   * can still be missing).
   */
  async function read(
    tenantId: string,
    after: number,
    forceSnapshot: boolean,
    venueId?: string,
  ): Promise<CatalogueResponse> {
    const answer = await sharedRead(tenantId, after, forceSnapshot);
    if (venueId === undefined) return answer;
    // Changes up to the box's own cursor: no entry can be after it and at or below it (most polls, every idle one).
    if (answer.mode === 'changes' && answer.rev <= after) return { ...answer, inbox: [] };
    const inbox = await createInboxRepo(pool).forBox(tenantId, venueId, after, answer.mode === 'snapshot', answer.rev);
    return { ...answer, inbox };
  }

  async function readCatalogue(tenantId: string, after: number, forceSnapshot: boolean): Promise<CatalogueResponse> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const repo = createCatalogueRepo(client);
      const { rev, purgedRev } = await repo.position(tenantId);
      // A first request, a cursor older than a purged tombstone, or ahead of this central (restored from a backup).
      const snapshot = forceSnapshot || after === 0 || after < purgedRev || after > rev;
      const items = await repo.items(tenantId, snapshot ? 0 : after, snapshot);
      const cached = checksums.get(tenantId);
      let checksum = cached?.rev === rev ? cached.checksum : undefined;
      // Revs taken by headquarters' documents and orders change no catalogue row: the checksum still holds.
      if (
        checksum === undefined &&
        cached &&
        cached.rev < rev &&
        (await repo.items(tenantId, cached.rev, false)).length === 0
      ) {
        checksum = cached.checksum;
        checksums.set(tenantId, { rev, checksum });
      }
      if (checksum === undefined) {
        // One computation per tenant and rev: readers at other cursors woken by the same change wait for it
        // (every reader at this rev sees the same rows, whichever transaction reads them).
        const key = `${tenantId}\0${rev}`;
        let pending = computing.get(key);
        if (!pending) {
          pending = (async () => {
            const live = snapshot ? items : await repo.items(tenantId, 0, true);
            return catalogueChecksum(live.map((i) => ({ type: i.type, id: i.id, data: 'data' in i ? i.data : null })));
          })().finally(() => computing.delete(key));
          computing.set(key, pending);
        }
        checksum = await pending;
        checksums.set(tenantId, { rev, checksum });
      }
      await client.query('COMMIT');
      return { tenant: tenantId, rev, mode: snapshot ? 'snapshot' : 'changes', checksum, items };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  return {
    read,
    /**
     * The long poll: answers at once when there is something newer, else at the next change or after `waitMs`.
     * `outOfDate`, asked once the wait is registered (so a change after it still wakes the poll): whether the
     * box holds something else than the catalogue out of date (the release it was told to run), to answer at once.
     */
    async poll(
      tenantId: string,
      after: number,
      waitMs: number,
      forceSnapshot: boolean,
      venueId?: string,
      outOfDate?: () => Promise<boolean>,
    ): Promise<CatalogueResponse> {
      inFlight++;
      const waiter = notifier.waiter(tenantId, waitMs);
      try {
        const first = await read(tenantId, after, forceSnapshot, venueId);
        if (first.mode === 'snapshot' || first.rev > after || waitMs === 0) return first;
        if (outOfDate && (await outOfDate())) return first;
        await waiter.done;
        return await read(tenantId, after, false, venueId);
      } finally {
        waiter.cancel();
        if (--inFlight === 0) for (const w of idleWaiters.splice(0)) w();
      }
    },
    /** Resolves when no poll is reading (after the notifier closed, every waiting poll answers at once). */
    idle(): Promise<void> {
      if (inFlight === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}
export type CatalogueFeed = ReturnType<typeof createCatalogueFeed>;
