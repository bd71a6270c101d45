import { createServer } from 'node:net';

/**
 * A loopback port free right now, for a process that must keep its port across restarts (a balancer's server
 * line, a standby's peer URL names it); port 0 everywhere else.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
