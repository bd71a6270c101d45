/**
 * Socket close codes and frame-size rules of the hub (README "The socket").
 *
 * 4001 token expired; 4008 the socket fell behind (its send buffer passed `sockets.maxBackpressureBytes`, or it
 * was the largest when all buffers passed `sockets.maxBufferedBytes`); 4009 the replay after `?since=` would
 * pass `sockets.maxReplayBytes`. After 4008 or 4009 nothing is lost: the events stay in the store, and the
 * client reconnects with `?since=` (after 4009 with the HELLO's seq, once it has fetched its orders by id).
 */
export const CLOSE_TOKEN_EXPIRED = 4001;
export const CLOSE_TOO_SLOW = 4008;
export const CLOSE_REPLAY_TOO_LARGE = 4009;
export const TOO_SLOW_REASON = 'too slow: reconnect with ?since=';
export const REPLAY_TOO_LARGE_REASON = 'replay too large: fetch orders by id, reconnect with a newer since';

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
  return tooLargeNotice(seq, orderId);
}

export const tooLargeNotice = (seq: number, orderId: unknown): string =>
  `{"type":"ORDER_TOO_LARGE","seq":${seq},"payload":${JSON.stringify({ orderId: orderId ?? null })}}`;
