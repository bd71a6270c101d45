import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * What the proxy does to the next requests between a box and its central:
 * - pass: forward;
 * - down: refuse (the connection is reset, as when the central's host is unreachable);
 * - error: answer 500 without forwarding (a central that fails);
 * - loseAck: forward, let the central commit, then drop the answer (the box never hears it);
 * - duplicate: forward the same request twice, one after the other, and answer with the second answer;
 * - slow: forward after `delayMs`.
 */
export type Fault = 'pass' | 'down' | 'error' | 'loseAck' | 'duplicate' | 'slow';

export interface FaultProxy {
  url: string;
  /** Sets the fault for requests whose path starts with `pathPrefix` (all requests when omitted). */
  set(fault: Fault, options?: { pathPrefix?: string; times?: number; delayMs?: number }): void;
  /** Points the proxy at another central (a restarted one has a new port). */
  target(port: number): void;
  /** Answers seen per path and status, e.g. {'/sync-api/api/batches 200': 12}. */
  seen: Map<string, number>;
  close(): Promise<void>;
}

interface Rule {
  fault: Fault;
  pathPrefix: string;
  times: number;
  delayMs: number;
}

/** An in-process HTTP proxy on a free loopback port, forwarding to the central on `targetPort`. */
export async function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  let port = targetPort;
  let rule: Rule = { fault: 'pass', pathPrefix: '', times: Number.POSITIVE_INFINITY, delayMs: 0 };
  const seen = new Map<string, number>();
  const sockets = new Set<Socket>();
  const count = (path: string, status: number | string) => {
    const key = `${path.split('?')[0]} ${status}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  };

  const forward = (
    req: IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const out = request(
        { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 502,
              headers: res.headers as Record<string, string>,
              body: Buffer.concat(chunks),
            }),
          );
          res.on('error', reject);
        },
      );
      out.on('error', reject);
      out.end(body);
    });

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void handle(req, res, Buffer.concat(chunks)).catch(() => {
        count(req.url ?? '', 'proxy-error');
        res.destroy();
      });
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const path = req.url ?? '';
    const applies = rule.times > 0 && path.startsWith(rule.pathPrefix) && rule.fault !== 'pass';
    const fault = applies ? rule.fault : 'pass';
    if (applies) rule.times -= 1;
    if (fault === 'down') {
      count(path, 'reset');
      res.socket?.destroy();
      return;
    }
    if (fault === 'error') {
      count(path, 'injected-500');
      res.writeHead(500, { 'content-type': 'text/plain' }).end('injected failure');
      return;
    }
    if (fault === 'slow') await new Promise((r) => setTimeout(r, rule.delayMs));
    let answer = await forward(req, body);
    if (fault === 'duplicate') answer = await forward(req, body);
    count(path, answer.status);
    if (fault === 'loseAck') {
      count(path, 'answer-dropped');
      res.socket?.destroy();
      return;
    }
    const headers = { ...answer.headers };
    delete headers['transfer-encoding'];
    delete headers.connection;
    res.writeHead(answer.status, headers).end(answer.body);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const own = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${own}`,
    set(fault, options = {}) {
      rule = {
        fault,
        pathPrefix: options.pathPrefix ?? '',
        times: options.times ?? Number.POSITIVE_INFINITY,
        delayMs: options.delayMs ?? 0,
      };
    },
    target(p) {
      port = p;
    },
    seen,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
