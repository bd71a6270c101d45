import { type Db, inTransaction } from '../../db/open.js';
import { relaxedTransactions } from '../../db/wal-sync.js';

export interface OutboxRow {
  seq: number;
  eventId: string;
  tenantId: string;
  kind: string;
  aggregateId: string;
  envelope: string;
  chainHash: string;
  createdMs: number;
}

/** An outbox row as the sender sends it (`toSend`). */
export interface SendRow {
  seq: number;
  chainHash: string;
  envelope: Buffer;
}

export interface SyncState {
  epoch: number;
  ackedSeq: number;
  ackedHash: string;
  lastSuccessMs: number | null;
  lastError: string | null;
  lastErrorMs: number | null;
  backfilled: boolean;
}

export interface FetchedRow {
  seq: number;
  epoch: number;
  chainHash: string;
  envelope: string;
}

type RawOutbox = {
  seq: number;
  event_id: string;
  tenant_id: string;
  kind: string;
  aggregate_id: string;
  envelope: string;
  chain_hash: string;
  created_ms: number;
};
const outboxRow = (r: RawOutbox): OutboxRow => ({
  seq: r.seq,
  eventId: r.event_id,
  tenantId: r.tenant_id,
  kind: r.kind,
  aggregateId: r.aggregate_id,
  envelope: r.envelope,
  chainHash: r.chain_hash,
  createdMs: r.created_ms,
});

/** No event was written before this: a stamp before it is a clock that lost its setting (1970 and on). */
const EARLIEST_STAMP_MS = Date.UTC(2000, 0, 1);

/**
 * SQL of the sync module: the outbox, the sender's state, dead letters and the events reconcile fetched from the
 * central (`fetched*`: table sync_inbox, which is not headquarters' inbox).
 */
export function createSyncRepo(db: Db) {
  const tx = inTransaction(db);
  const s = {
    last: db.prepare<[], { seq: number; chain_hash: string }>(
      'SELECT seq, chain_hash FROM sync_outbox ORDER BY seq DESC LIMIT 1',
    ),
    insert: db.prepare(
      `INSERT INTO sync_outbox (seq, event_id, tenant_id, kind, aggregate_id, envelope, chain_hash, created_ms)
       VALUES (@seq, @eventId, @tenantId, @kind, @aggregateId, @envelope, @chainHash, @createdMs)`,
    ),
    after: db.prepare<[number, number], RawOutbox>('SELECT * FROM sync_outbox WHERE seq > ? ORDER BY seq LIMIT +?'),
    sendable: db.prepare<[number, number], { seq: number; chain_hash: string; envelope: Buffer }>(
      'SELECT seq, chain_hash, CAST(envelope AS BLOB) AS envelope FROM sync_outbox WHERE seq > ? ORDER BY seq LIMIT +?',
    ),
    one: db.prepare<[number], RawOutbox>('SELECT * FROM sync_outbox WHERE seq = ?'),
    oldest: db.prepare<[], { seq: number }>('SELECT seq FROM sync_outbox ORDER BY seq LIMIT 1'),
    firstAfter: db.prepare<[number], { created_ms: number }>(
      'SELECT created_ms FROM sync_outbox WHERE seq > ? ORDER BY seq LIMIT 1',
    ),
    deleteFrom: db.prepare<[number]>('DELETE FROM sync_outbox WHERE seq > ?'),
    // Up to the newest acknowledged event stamped on a plausible clock before the cutoff: seq is the order things
    // happened in, so every event before it is at least as old, whatever its own stamp says (docs/sync.md "Clocks").
    prune: db.prepare<{ acked: number; before: number; earliest: number }>(
      `DELETE FROM sync_outbox WHERE seq <= (
         SELECT seq FROM sync_outbox WHERE seq <= @acked AND created_ms >= @earliest AND created_ms < @before
         ORDER BY seq DESC LIMIT 1)
       AND seq < (SELECT MAX(seq) FROM sync_outbox)`,
    ),
    state: db.prepare<
      [],
      {
        epoch: number;
        acked_seq: number;
        acked_hash: string;
        last_success_ms: number | null;
        last_error: string | null;
        last_error_ms: number | null;
        backfilled: number;
      }
    >('SELECT * FROM sync_state WHERE id = 1'),
    ack: db.prepare(
      'UPDATE sync_state SET acked_seq = ?, acked_hash = ?, last_success_ms = ?, last_error = NULL WHERE id = 1',
    ),
    position: db.prepare('UPDATE sync_state SET acked_seq = ?, acked_hash = ? WHERE id = 1'),
    contact: db.prepare('UPDATE sync_state SET last_success_ms = ?, last_error = NULL WHERE id = 1'),
    epoch: db.prepare('UPDATE sync_state SET epoch = ? WHERE id = 1'),
    error: db.prepare('UPDATE sync_state SET last_error = ?, last_error_ms = ? WHERE id = 1'),
    backfilled: db.prepare('UPDATE sync_state SET backfilled = 1 WHERE id = 1'),
    deadLetter: db.prepare(
      'INSERT OR IGNORE INTO sync_dead_letters (seq, event_id, reason, at_ms) VALUES (?, ?, ?, ?)',
    ),
    deadLetters: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM sync_dead_letters'),
    fetchedPut: db.prepare('INSERT OR REPLACE INTO sync_inbox (seq, epoch, chain_hash, envelope) VALUES (?, ?, ?, ?)'),
    fetchedAll: db.prepare<[], { seq: number; epoch: number; chain_hash: string; envelope: string }>(
      'SELECT * FROM sync_inbox ORDER BY seq',
    ),
    fetchedLast: db.prepare<[], { seq: number; chain_hash: string }>(
      'SELECT seq, chain_hash FROM sync_inbox ORDER BY seq DESC LIMIT 1',
    ),
    fetchedClear: db.prepare('DELETE FROM sync_inbox'),
  };

  /** A transaction committed without waiting for the disk (see `ack`); the next durable commit flushes it. */
  const lazily = relaxedTransactions(db);

  return {
    /** The newest event's seq and chain hash; undefined for an empty outbox. */
    last: (): { seq: number; chainHash: string } | undefined => {
      const r = s.last.get();
      return r && { seq: r.seq, chainHash: r.chain_hash };
    },
    /** Inserts an event at its seq (the newest row's plus one, or its place in a restore). Returns the seq. */
    insert: (row: OutboxRow): number => Number(s.insert.run(row).lastInsertRowid),
    after: (seq: number, limit: number): OutboxRow[] => s.after.all(seq, limit).map(outboxRow),
    /**
     * What the sender sends of the events after `seq`: each envelope's UTF-8 bytes as stored, never a JS string
     * (decoding a megabyte to a string and encoding it back was most of the sender's time on the event loop).
     */
    toSend: (seq: number, limit: number): SendRow[] =>
      s.sendable.all(seq, limit).map((r) => ({ seq: r.seq, chainHash: r.chain_hash, envelope: r.envelope })),
    one: (seq: number): OutboxRow | undefined => {
      const r = s.one.get(seq);
      return r && outboxRow(r);
    },
    oldestSeq: (): number | undefined => s.oldest.get()?.seq,
    /** Unsent events and when the oldest was written (seqs are contiguous, so no count over the backlog). */
    backlog(ackedSeq: number): { count: number; oldestMs: number | null } {
      const newest = s.last.get()?.seq ?? 0;
      return { count: Math.max(0, newest - ackedSeq), oldestMs: s.firstAfter.get(ackedSeq)?.created_ms ?? null };
    },
    /** Removes the events after `seq` (they are re-inserted renumbered by a restore). */
    deleteAfter: (seq: number) => s.deleteFrom.run(seq),
    /**
     * Acknowledged events older than `beforeMs`; the newest row always stays (it carries the chain). An event's
     * age is that of the newest event after it stamped on a set clock: one a box stamped in 1970 after a power
     * cut (no RTC, no NTP yet) or a year ahead is as old as the events that follow it, so a clock set right
     * neither removes it at once nor keeps it for a year.
     */
    prune: (ackedSeq: number, beforeMs: number): number =>
      s.prune.run({ acked: ackedSeq, before: beforeMs, earliest: EARLIEST_STAMP_MS }).changes,
    state(): SyncState {
      const r = s.state.get()!;
      return {
        epoch: r.epoch,
        ackedSeq: r.acked_seq,
        ackedHash: r.acked_hash,
        lastSuccessMs: r.last_success_ms,
        lastError: r.last_error,
        lastErrorMs: r.last_error_ms,
        backfilled: r.backfilled === 1,
      };
    },
    /**
     * Records an acknowledged batch (position and the central's dead letters) without waiting for the disk: the
     * sender must never hold the event loop for an fsync, and the position need not survive a power cut (a lost
     * one is found again at the next hello, as a lost acknowledgement is). The next durable commit (any order
     * command, synchronous=FULL) flushes it with everything before it.
     */
    ack(
      seq: number,
      hash: string,
      nowMs: number,
      deadLetters: { seq: number; eventId: string; reason: string }[],
    ): void {
      lazily(() => {
        s.ack.run(seq, hash, nowMs);
        for (const d of deadLetters) s.deadLetter.run(d.seq, d.eventId.slice(0, 64), d.reason.slice(0, 500), nowMs);
      });
    },
    /** The central answered a hello: a success, which clears the last error (written lazily, as `ack`). */
    contact: (nowMs: number) => lazily(() => s.contact.run(nowMs)),
    /** Moves the acknowledged position without counting it as a success (a hello that found the central elsewhere). */
    setPosition: (seq: number, hash: string) => s.position.run(seq, hash),
    setEpoch: (epoch: number) => s.epoch.run(epoch),
    setError: (message: string, nowMs: number) => s.error.run(message, nowMs),
    markBackfilled: () => s.backfilled.run(),
    deadLetterCount: (): number => s.deadLetters.get()!.n,
    fetchedPut: (r: FetchedRow) => s.fetchedPut.run(r.seq, r.epoch, r.chainHash, r.envelope),
    fetchedAll: (): FetchedRow[] =>
      s.fetchedAll.all().map((r) => ({ seq: r.seq, epoch: r.epoch, chainHash: r.chain_hash, envelope: r.envelope })),
    fetchedLast: (): { seq: number; chainHash: string } | undefined => {
      const r = s.fetchedLast.get();
      return r && { seq: r.seq, chainHash: r.chain_hash };
    },
    fetchedClear: () => s.fetchedClear.run(),
    transaction: <T>(fn: () => T): T => tx.immediate(fn),
  };
}
export type SyncRepo = ReturnType<typeof createSyncRepo>;
