import type { Db } from '../../db/open.js';
import { frameText, orderTooLargeFrame, type StoredFrameType, type StreamEvent } from '../../shared/socket-protocol.js';

/**
 * A stream of socket events: a user's own (its id is the user id, a UUID) or a venue's (`venue:<venue id>`,
 * every order of the venue, for staff). The two never collide because a user id is a bare UUID.
 */
export const venueStream = (venueId: string): string => `venue:${venueId}`;

/** A frame ready for the wire: built once per stream, sent to each socket reading that stream. */
export interface OutgoingFrame {
  tenantId: string;
  stream: string;
  seq: number;
  text: string;
}

/** How far ahead of now (or of the newest event) an event's stamp still counts as young for the retention. */
const AHEAD_MS = 3_600_000;

/**
 * The event streams behind the socket. Every event of a stream takes the next number of that stream;
 * ORDER_CHANGE, NOTIFICATION and PRINTER_STATUS frames are kept for replay (`?since=N`). A HELLO takes no
 * number of its own: it carries the stream position its socket starts after (docs/api.md "The socket"), so every
 * frame on a socket has a higher seq than the one before it, replayed or live.
 *
 * Venue streams live in the same tables as user streams (`user_id` = `venue:<id>`): numbering, replay and
 * the retention sweep then work identically for both, in the same transaction as the command that caused the
 * event, with no second mechanism to keep in step.
 */
export function createEventStore(db: Db) {
  // A stream's position: its newest kept event, or the newest one the retention removed (it writes that into
  // user_streams as it removes them), whichever is higher. So a number is never given twice, and appending an
  // event writes no counter row: two b-tree pages fewer in the WAL for every command (docs/operations.md "What a
  // `new` writes"). The index is (user_id, seq), without the tenant (migration 12): the newest of the stream is read
  // backwards from the end of its user id's entries, the first of this tenant.
  const last = db.prepare<[{ tenant: string; stream: string }], { last_seq: number }>(
    `SELECT max(coalesce((SELECT seq FROM user_events WHERE user_id = @stream AND tenant_id = @tenant ORDER BY seq DESC LIMIT 1), 0),
                coalesce((SELECT last_seq FROM user_streams WHERE tenant_id = @tenant AND user_id = @stream), 0))
       AS last_seq`,
  );
  const insert = db.prepare(
    'INSERT INTO user_events (tenant_id, user_id, seq, type, payload_json, created_ms) VALUES (?, ?, ?, ?, ?, ?)',
  );
  // A payload over the frame limit is not loaded into memory: SQLite hands over its order id instead, for the
  // ORDER_TOO_LARGE notice that replaces it (src/shared/socket-protocol.ts).
  type PageParams = { max: number; tenant: string; stream: string; after: number; limit: number };
  const page = db.prepare<
    [PageParams],
    {
      seq: number;
      type: StoredFrameType;
      payload_json: string | null;
      order_id: string | null;
    }
  >(
    `SELECT seq, type,
            CASE WHEN octet_length(payload_json) > @max THEN NULL ELSE payload_json END AS payload_json,
            CASE WHEN octet_length(payload_json) > @max
                 THEN coalesce(json_extract(payload_json, '$.orderId'), json_extract(payload_json, '$.id')) END AS order_id
       FROM user_events WHERE tenant_id = @tenant AND user_id = @stream AND seq > @after ORDER BY seq LIMIT +@limit`,
  );
  // What a replay would put on the wire, counted in SQLite so no payload is loaded into memory to decide. A row
  // over the frame limit is sent as a small notice (ORDER_TOO_LARGE), so it counts as one.
  const wireBytes = db.prepare<
    [{ max: number; tenant: string; stream: string; after: number; before: number }],
    { bytes: number }
  >(
    `SELECT COALESCE(SUM(CASE WHEN octet_length(payload_json) > @max THEN 128 ELSE octet_length(payload_json) + 64 END), 0)
       AS bytes FROM user_events WHERE tenant_id = @tenant AND user_id = @stream AND seq > @after AND seq < @before`,
  );
  // Retention removes a prefix of the table in rowid order (the order the events were written), up to the first
  // event written at or after the cutoff: it reads only what it removes, with no index on created_ms for every
  // command to write. An event stamped more than an hour ahead of both now and the newest event (a clock set
  // ahead, then put right, and events written since) does not stop it: it goes with the prefix. A clock set back
  // with no event written since removes nothing young: the newest event's stamp counts as now. Before the rows
  // go, each stream's newest removed number is kept in user_streams, in the same transaction.
  const newestStamp = db.prepare<[], { created_ms: number }>(
    'SELECT created_ms FROM user_events ORDER BY rowid DESC LIMIT 1',
  );
  const pruneStop = db.prepare<[{ before: number; ahead: number }], { rowid: number }>(
    `SELECT rowid FROM user_events WHERE created_ms >= @before AND created_ms <= @ahead ORDER BY rowid LIMIT 1`,
  );
  const keepPositions = db.prepare<[number]>(
    `INSERT INTO user_streams (tenant_id, user_id, last_seq)
       SELECT tenant_id, user_id, max(seq) FROM user_events WHERE rowid < ? GROUP BY tenant_id, user_id
     ON CONFLICT (tenant_id, user_id) DO UPDATE SET last_seq = max(last_seq, excluded.last_seq)`,
  );
  const prune = db.prepare<[number]>('DELETE FROM user_events WHERE rowid < ?');
  const pruneTransaction = db.transaction((stop: number): number => {
    keepPositions.run(stop);
    return prune.run(stop).changes;
  });

  return {
    /** Appends an event (built by src/shared/socket-protocol.ts) to a stream; call inside the transaction that caused it. */
    append(tenantId: string, stream: string, event: StreamEvent, nowMs: number): OutgoingFrame {
      const seq = last.get({ tenant: tenantId, stream })!.last_seq + 1;
      insert.run(tenantId, stream, seq, event.type, event.payloadJson, nowMs);
      return { tenantId, stream, seq, text: frameText(event.type, seq, event.payloadJson) };
    },
    /**
     * The seq of the stream's newest event, kept or removed (0 for a stream that never had one): a read, no number
     * is taken.
     */
    position: (tenantId: string, stream: string): number => last.get({ tenant: tenantId, stream })!.last_seq,
    /** Up to `limit` kept frames after seq `after`, in order: a replay is read page by page. */
    page(
      tenantId: string,
      stream: string,
      after: number,
      limit: number,
      maxFrameBytes: number,
    ): { seq: number; text: string }[] {
      return page.all({ max: maxFrameBytes, tenant: tenantId, stream, after, limit }).map((r) => ({
        seq: r.seq,
        text:
          r.payload_json === null ? orderTooLargeFrame(r.seq, r.order_id) : frameText(r.type, r.seq, r.payload_json),
      }));
    },
    /** About the bytes a replay of the frames numbered after `since` and before `before` would send. */
    replayBytes(tenantId: string, stream: string, since: number, before: number, maxFrameBytes: number): number {
      return wireBytes.get({ max: maxFrameBytes, tenant: tenantId, stream, after: since, before })!.bytes;
    },
    /**
     * Removes the events written before the first one stamped at or after `beforeMs` (and at most an hour ahead
     * of `nowMs` or of the newest event, whichever is later); returns how many.
     */
    pruneBefore(beforeMs: number, nowMs: number): number {
      // A missing clock would find no young event and remove them all.
      if (!Number.isFinite(beforeMs) || !Number.isFinite(nowMs))
        throw new TypeError('pruneBefore takes two times in ms');
      const ahead = Math.max(nowMs, newestStamp.get()?.created_ms ?? nowMs) + AHEAD_MS;
      return pruneTransaction.immediate(pruneStop.get({ before: beforeMs, ahead })?.rowid ?? Number.MAX_SAFE_INTEGER);
    },
  };
}
export type EventStore = ReturnType<typeof createEventStore>;
