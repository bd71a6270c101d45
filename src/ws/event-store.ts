import type { Db } from '../db/open.js';

export type FrameType = 'HELLO' | 'ORDER_CHANGE' | 'NOTIFICATION';

/** A frame ready for the wire: built once per user, sent to each of that user's sockets. */
export interface OutgoingFrame {
  tenantId: string;
  userId: string;
  seq: number;
  text: string;
}

export const frameText = (type: FrameType, seq: number, payloadJson: string): string =>
  `{"type":"${type}","seq":${seq},"payload":${payloadJson}}`;

/**
 * The per-user event streams behind the socket. Every frame a user receives takes the next number of that
 * user's stream; ORDER_CHANGE and NOTIFICATION frames are kept for replay (`?since=N`), HELLO frames are not.
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
    /** Appends an event to a user's stream; call inside the transaction that caused it. */
    append(tenantId: string, userId: string, type: FrameType, payloadJson: string, nowMs: number): OutgoingFrame {
      const seq = bump.get(tenantId, userId)!.last_seq;
      insert.run(tenantId, userId, seq, type, payloadJson, nowMs);
      return { tenantId, userId, seq, text: frameText(type, seq, payloadJson) };
    },
    /** The HELLO of a new socket: takes a number of the stream, is not kept for replay. */
    hello(tenantId: string, userId: string, payloadJson: string): string {
      const seq = bump.get(tenantId, userId)!.last_seq;
      return frameText('HELLO', seq, payloadJson);
    },
    replay(tenantId: string, userId: string, since: number): string[] {
      return after.all(tenantId, userId, since).map((r) => frameText(r.type, r.seq, r.payload_json));
    },
    pruneBefore: (ms: number): number => prune.run(ms).changes,
  };
}
export type EventStore = ReturnType<typeof createEventStore>;
