import type { Db } from '../db/open.js';

export type FrameType = 'HELLO' | 'ORDER_CHANGE' | 'NOTIFICATION' | 'PRINTER_STATUS';

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

export const frameText = (type: FrameType, seq: number, payloadJson: string): string =>
  `{"type":"${type}","seq":${seq},"payload":${payloadJson}}`;

/**
 * The event streams behind the socket. Every frame of a stream takes the next number of that stream;
 * ORDER_CHANGE, NOTIFICATION and PRINTER_STATUS frames are kept for replay (`?since=N`), HELLO frames are not.
 *
 * Venue streams live in the same tables as user streams (`user_id` = `venue:<id>`): numbering, replay and
 * the retention sweep then work identically for both, in the same transaction as the command that caused the
 * event, with no second mechanism to keep in step.
 */
export function createEventStore(db: Db) {
  const bump = db.prepare<[string, string], { last_seq: number }>(
    `INSERT INTO user_streams (tenant_id, user_id, last_seq) VALUES (?, ?, 1)
     ON CONFLICT (tenant_id, user_id) DO UPDATE SET last_seq = last_seq + 1 RETURNING last_seq`,
  );
  const insert = db.prepare(
    'INSERT INTO user_events (tenant_id, user_id, seq, type, payload_json, created_ms) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const after = db.prepare<[string, string, number], { seq: number; type: FrameType; payload_json: string }>(
    'SELECT seq, type, payload_json FROM user_events WHERE tenant_id = ? AND user_id = ? AND seq > ? ORDER BY seq',
  );
  const prune = db.prepare<[number]>('DELETE FROM user_events WHERE created_ms < ?');

  return {
    /** Appends an event to a stream; call inside the transaction that caused it. */
    append(tenantId: string, stream: string, type: FrameType, payloadJson: string, nowMs: number): OutgoingFrame {
      const seq = bump.get(tenantId, stream)!.last_seq;
      insert.run(tenantId, stream, seq, type, payloadJson, nowMs);
      return { tenantId, stream, seq, text: frameText(type, seq, payloadJson) };
    },
    /** The HELLO of a new socket: takes a number of the stream, is not kept for replay. */
    hello(tenantId: string, stream: string, payloadJson: string): string {
      const seq = bump.get(tenantId, stream)!.last_seq;
      return frameText('HELLO', seq, payloadJson);
    },
    replay(tenantId: string, stream: string, since: number): string[] {
      return after.all(tenantId, stream, since).map((r) => frameText(r.type, r.seq, r.payload_json));
    },
    pruneBefore: (ms: number): number => prune.run(ms).changes,
  };
}
export type EventStore = ReturnType<typeof createEventStore>;
