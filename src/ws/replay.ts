import { wireFrame } from './frame-size.js';

/** What the replay needs of a uWS WebSocket (a fake in unit tests). */
export interface ReplayWire {
  /** Sends one frame, as UTF-8 bytes (uWS would write a one-byte string as Latin-1); uWS's send() result. */
  send(frame: Buffer): number;
  /** True while the socket holds unsent bytes, or its reader has not acknowledged enough of what was sent. */
  held(): boolean;
  cork(fn: () => void): unknown;
}

export interface ReplayState {
  /** The highest seq sent to this socket: the replay reads after it, live pushes skip up to it. */
  cursor: number;
  /** While true, live pushes are not sent: the replay reads them from the store in their turn. */
  replaying: boolean;
  replayedBytes: number;
}

export interface ReplayOptions {
  /** Kept frames after `after`, in order, at most `limit`. */
  page(after: number, limit: number): { seq: number; text: string }[];
  /** Bytes sent in one go before the socket's buffer is looked at again. */
  pageBytes: number;
  maxFrameBytes: number;
  maxReplayBytes: number;
}

/** uWS's send() result for a message it dropped because the socket's buffer was over maxBackpressure. */
export const DROPPED = 2;
const PAGE_ROWS = 16;

/**
 * Sends the replay after `?since=` page by page, each only once the socket's send buffer is empty and the reader
 * has acknowledged what came before (src/ws/ack-window.ts), so a replay never holds more than about one page per
 * socket in memory (the rest waits in SQLite). Called at open, and again from uWS's `drain` and `pong` handlers.
 *
 * The replay runs until it reaches the end of the stream, events that arrived meanwhile included; only then
 * does the socket take live pushes. So frames go out in seq order with none missing or twice.
 *
 * 'live': caught up. 'wait': call again at the next drain. 'tooSlow': the socket could not keep up: uWS dropped
 * a frame, or live events kept the replay going past `maxReplayBytes` (the backlog alone was checked at open).
 */
export function pumpReplay(ws: ReplayWire, state: ReplayState, o: ReplayOptions): 'live' | 'wait' | 'tooSlow' {
  for (;;) {
    if (ws.held()) return 'wait';
    const rows = o.page(state.cursor, PAGE_ROWS);
    if (rows.length === 0) {
      state.replaying = false;
      return 'live';
    }
    let sent = 0;
    let dropped = false;
    ws.cork(() => {
      for (const row of rows) {
        const frame = Buffer.from(wireFrame(row.text, row.seq, o.maxFrameBytes));
        if (ws.send(frame) === DROPPED) {
          dropped = true;
          return;
        }
        state.cursor = row.seq;
        sent += frame.length;
        if (sent >= o.pageBytes) return;
      }
    });
    state.replayedBytes += sent;
    if (dropped || state.replayedBytes > o.maxReplayBytes) return 'tooSlow';
  }
}
