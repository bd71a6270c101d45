/**
 * How far a socket's reader is behind, measured by the reader itself (docs/api.md "Limits of the socket").
 *
 * uWS's send buffer only starts to fill once the kernel's buffers for the connection are full, and those grow to
 * several MiB per connection (tcp_wmem, the peer's receive window): 1000 frozen tablets cost the box gigabytes of
 * copying into kernel buffers before any of them looked slow. So every `pingEveryBytes` sent, the socket gets a
 * ping whose payload is the byte count at that point; the client's pong (automatic in browsers and WebSocket
 * libraries) comes back only once it has read everything before the ping, and acknowledges up to there. More
 * than `maxBytes` sent past the last acknowledged point means the reader has stopped reading.
 *
 * Pongs without our payload (answers to uWS's own idle pings, or unsolicited ones) acknowledge nothing.
 */
export interface AckWindow {
  /** Bytes sent to the socket so far. */
  sent: number;
  /** `sent` at the last ping the client answered. */
  acked: number;
  /** `sent` at the ping in flight, or -1. */
  pingAt: number;
}

export interface AckLimits {
  maxBytes: number;
  pingEveryBytes: number;
}

export const newAckWindow = (): AckWindow => ({ sent: 0, acked: 0, pingAt: -1 });

/**
 * Counts `bytes` just sent. Returns 'ping' when a ping with payload `pingPayload(w)` is due, 'tooSlow' when the
 * reader was already more than `maxBytes` behind before these bytes (so one large frame never counts against a
 * reader that is keeping up), else undefined.
 */
export function countSent(w: AckWindow, bytes: number, limits: AckLimits): 'ping' | 'tooSlow' | undefined {
  const behind = w.sent - w.acked;
  w.sent += bytes;
  if (behind > limits.maxBytes) return 'tooSlow';
  if (w.pingAt < 0 && w.sent - w.acked >= limits.pingEveryBytes) {
    w.pingAt = w.sent;
    return 'ping';
  }
  return undefined;
}

/** The payload of the ping due now (the byte count it acknowledges). */
export const pingPayload = (w: AckWindow): string => String(w.pingAt);

/** A pong arrived with `payload`: true when it answered the ping in flight (then another may be due). */
export function countPong(w: AckWindow, payload: string): boolean {
  if (w.pingAt < 0 || payload !== String(w.pingAt)) return false;
  w.acked = w.pingAt;
  w.pingAt = -1;
  return true;
}
