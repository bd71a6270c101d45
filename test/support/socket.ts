import WebSocket from 'ws';

export interface Frame {
  type: string;
  seq: number;
  payload: Record<string, unknown> & { id?: string; status?: string };
}

export interface TestSocket {
  ws: WebSocket;
  frames: Frame[];
  /** The next frame of this type not yet taken (waits for it). */
  next(type: string, timeoutMs?: number): Promise<Frame>;
  /** Resolves with the close code and reason. */
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

/** A real `ws` client that buffers frames so a test can await them in order. */
export function openSocket(url: string, token?: string, headers: Record<string, string> = {}): Promise<TestSocket> {
  const ws = new WebSocket(url, { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
  const frames: Frame[] = [];
  const taken = new Set<Frame>();
  const waiters: (() => void)[] = [];
  ws.on('message', (data) => {
    frames.push(JSON.parse(String(data)) as Frame);
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  const socket: TestSocket = {
    ws,
    frames,
    closed,
    close: () => ws.close(),
    next(type, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${type} frame within ${timeoutMs} ms; got ${JSON.stringify(frames)}`)),
          timeoutMs,
        );
        const look = () => {
          const frame = frames.find((f) => f.type === type && !taken.has(f));
          if (frame) {
            taken.add(frame);
            clearTimeout(timer);
            resolve(frame);
          } else waiters.push(look);
        };
        look();
      });
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(socket));
    ws.once('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })),
    );
    ws.once('error', reject);
  });
}
