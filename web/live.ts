import type { Session } from './api.js';
import type { Frame } from './model.js';
import { Store } from './store.js';

export interface LiveOptions {
  session: Session;
  /** Query of the socket besides ticket and since (`venue=...` for a staff venue socket). */
  query: string;
  onFrame(frame: Frame): void;
  /**
   * Fetch the current state over HTTP: after the first HELLO (the socket replays nothing before it), and after a
   * 4009 (the box will not replay that much). Frames that arrive meanwhile are still delivered.
   */
  resync(): Promise<void>;
}

/**
 * The box's socket, kept open (docs/api.md "The socket", "Limits of the socket"). It follows the seq rule: the
 * HELLO's seq is the position to continue from, any later frame at or below the position is a duplicate, and a
 * reconnect sends ?since=<last seq processed>, so a dropped Wi-Fi or a restarted box loses no event (kept 48 h).
 * 4008 (too slow) reconnects with since; 4009 (replay too large) resyncs over HTTP and reconnects from the
 * HELLO's seq; 4001 (token expired) refreshes the token first.
 *
 * Each connection asks for a single-use socket ticket first and opens the socket with it, never with the token in
 * the URL, where proxies' access logs and the browser's tooling would keep it (docs/api.md "The socket").
 */
export class LiveSocket {
  readonly online = new Store(false);
  private position: number | null = null;
  private ws: WebSocket | undefined;
  private stopped = false;
  private retryMs = 500;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private needResync = true;
  private refreshToken = false;

  constructor(private readonly options: LiveOptions) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.ws?.close(1000);
    this.ws = undefined;
    this.online.set(false);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let ticket: string;
    try {
      // A forced refresh first after a 4001; the call itself refreshes and retries once on a 401.
      if (this.refreshToken) await this.options.session.accessToken(true);
      this.refreshToken = false;
      ({ ticket } = await this.options.session.call<{ ticket: string }>('POST', '/ordering-api/api/socket-ticket'));
    } catch {
      this.retry();
      return;
    }
    if (this.stopped) return;
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const since = this.position === null ? '' : `&since=${this.position}`;
    const query = this.options.query ? `${this.options.query}&` : '';
    const ws = new WebSocket(
      `${scheme}://${location.host}/ordering-api/ws?${query}ticket=${encodeURIComponent(ticket)}${since}`,
    );
    this.ws = ws;
    let opened = false;
    ws.onmessage = (ev) => {
      let frame: Frame;
      try {
        frame = JSON.parse(String(ev.data)) as Frame;
      } catch {
        return;
      }
      if (frame.type === 'HELLO') {
        opened = true;
        // The position the socket starts after: our since on a reconnect (lower when the box was restored from
        // an older copy), else the stream's newest event.
        this.position = frame.seq;
        this.retryMs = 500;
        this.online.set(true);
        if (this.needResync) {
          this.needResync = false;
          this.options.resync().catch(() => {
            this.needResync = true;
            ws.close(4000, 'resync failed');
          });
        }
        return;
      }
      if (this.position !== null && frame.seq <= this.position) return; // a duplicate
      this.position = frame.seq;
      this.options.onFrame(frame);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      this.online.set(false);
      if (ev.code === 4009) this.needResync = true;
      // 4001: the token expired; a socket refused before its HELLO may have had a token the box no longer takes.
      if (ev.code === 4001 || !opened) this.refreshToken = ev.code === 4001 || this.retryMs >= 2000;
      this.retry();
    };
  }

  private retry(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const wait = this.retryMs * (0.75 + Math.random() * 0.5);
    this.retryMs = Math.min(this.retryMs * 2, 5000);
    this.timer = setTimeout(() => void this.connect(), wait);
  }
}
