import type { Queryable } from '../../db/pool.js';

export interface RawEvent {
  seq: number;
  eventId: string | null;
  kind: string | null;
  stream: string | null;
  aggregate: string | null;
  envelope: string;
  /** The envelope parsed (readEnvelope in projections/project.ts). */
  value: unknown;
  hash: string;
}

export interface DeadLetter {
  seq: number;
  eventId: string;
  reason: string;
}

/**
 * PostgreSQL's text cannot hold U+0000; a box's event may carry one as a JSON escape, and its reason for a dead
 * letter may quote it. Such text is stored with U+FFFD instead, so the event stays a dead letter, never a 500.
 */
export const textSafe = (text: string): string =>
  text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;

/**
 * Texts without a newline (envelopes: the lines of a batch) as one text, each ended by a newline: SQL reads them
 * back in order with `string_to_table($n, E'\n')` in a ROWS FROM beside the other columns' unnest(), and drops the
 * one empty row after the last newline (its other columns are null). An empty text stays a row. A megabyte of
 * envelopes travels so, not as text[]: pg escapes every character of an array literal and PostgreSQL parses it
 * again, which cost more than the rest of their way (docs/performance.md "Draining a busy day at 5,000 events/s").
 */
export const textLines = (texts: string[]): string => `${texts.join('\n')}\n`;

/** SQL of the ingest: raw events, stored chain hashes, dead letters. */
export function createIngestRepo(db: Queryable) {
  return {
    /** The stored chain hashes of seqs from..to of a device. */
    async hashes(tenantId: string, deviceId: string, from: number, to: number): Promise<Map<number, string>> {
      const { rows } = await db.query<{ seq: number; chain_hash: string }>({
        name: 'ingest-hashes',
        text: 'SELECT seq, chain_hash FROM sync_events WHERE tenant_id = $1 AND device_id = $2 AND seq BETWEEN $3 AND $4',
        values: [tenantId, deviceId, from, to],
      });
      return new Map(rows.map((r) => [r.seq, r.chain_hash]));
    },
    /**
     * One statement for the batch's new events (the head lock makes the conflict clause a second guard). The
     * envelopes travel as one text of lines (textLines), not as a text[]: escaping and parsing an array literal of
     * a megabyte of JSON was a good part of the ingest's time (docs/performance.md "Draining a busy day at 5,000
     * events/s").
     */
    async insertEvents(tenantId: string, deviceId: string, epoch: number, events: RawEvent[]): Promise<void> {
      if (events.length === 0) return;
      await db.query({
        name: 'ingest-insert-events',
        text: `INSERT INTO sync_events (tenant_id, device_id, epoch, seq, event_id, kind, stream, aggregate_id, envelope, chain_hash)
         SELECT $1::text, $2::text, $3::int, s, i, k, st, a, e, h
         FROM ROWS FROM (unnest($4::bigint[]), unnest($5::uuid[]), unnest($6::text[]), unnest($7::text[]),
           unnest($8::text[]), string_to_table($9::text, E'\\n'), unnest($10::text[])) AS t(s, i, k, st, a, e, h)
         WHERE s IS NOT NULL
         ON CONFLICT DO NOTHING`,
        values: [
          tenantId,
          deviceId,
          epoch,
          events.map((e) => e.seq),
          events.map((e) => e.eventId),
          events.map((e) => e.kind),
          events.map((e) => e.stream),
          events.map((e) => e.aggregate),
          textLines(events.map((e) => e.envelope)),
          events.map((e) => e.hash),
        ],
      });
    },
    async insertDeadLetter(
      tenantId: string,
      deviceId: string,
      seq: number,
      eventId: string | null,
      reason: string,
      envelope: string,
    ) {
      await db.query(
        `INSERT INTO sync_dead_letters (tenant_id, device_id, seq, event_id, reason, envelope) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT DO NOTHING`,
        [tenantId, deviceId, seq, eventId, textSafe(reason), envelope],
      );
    },
    async deadLetters(tenantId: string, deviceId: string, from: number, to: number): Promise<DeadLetter[]> {
      const { rows } = await db.query<{ seq: number; event_id: string | null; reason: string }>({
        name: 'ingest-dead-letters',
        // Those headquarters replayed since (dead-letters.ts) are set aside no more.
        text: `SELECT seq, event_id, reason FROM sync_dead_letters
         WHERE tenant_id = $1 AND device_id = $2 AND seq BETWEEN $3 AND $4 AND resolved_at IS NULL ORDER BY seq`,
        values: [tenantId, deviceId, from, to],
      });
      return rows.map((r) => ({ seq: r.seq, eventId: r.event_id ?? '', reason: r.reason }));
    },
  };
}
