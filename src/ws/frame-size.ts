import { orderTooLargeFrame } from '../shared/socket-protocol.js';

/**
 * Frame-size rules of the hub (docs/api.md "The socket"); the close codes are the protocol's
 * (src/shared/socket-protocol.ts): 4008 when the socket fell behind (its send buffer passed
 * `sockets.maxBackpressureBytes`, or it was the largest when all buffers passed `sockets.maxBufferedBytes`), 4009
 * when the replay after `?since=` would pass `sockets.maxReplayBytes`. After 4008 or 4009 nothing is lost: the
 * events stay in the store, and the client reconnects with `?since=` (after 4009 with the HELLO's seq, once it
 * has fetched its orders by id).
 */

/** UTF-8 length without encoding when the answer is plain from the UTF-16 length (bytes >= units >= bytes/3). */
export function fitsBytes(text: string, maxBytes: number): boolean {
  if (text.length > maxBytes) return false;
  return text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes;
}

/**
 * What goes on the wire for a stored frame: the frame itself or, when larger than `maxBytes`, an
 * `ORDER_TOO_LARGE` notice `{orderId}` with the same seq. The store keeps the full frame (a later, higher
 * limit replays it whole); the notice tells the client to GET the order by id. It takes the event's own seq,
 * so numbering stays gapless and `?since=` works as for any frame.
 */
export function wireFrame(text: string, seq: number, maxBytes: number): string {
  if (fitsBytes(text, maxBytes)) return text;
  let orderId: unknown = null;
  try {
    const { payload } = JSON.parse(text) as { payload?: { id?: unknown; orderId?: unknown } };
    // ORDER_CHANGE carries the Order (`id`); a NOTIFICATION names its `orderId`.
    orderId = payload?.orderId ?? payload?.id ?? null;
  } catch {
    // Stored frames are built from JSON.stringify; an unparsable one still gets a notice, without an id.
  }
  return orderTooLargeFrame(seq, orderId);
}
