import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface Balancer {
  url(path: string): string;
  logs: string[];
  stop(): Promise<void>;
}

/**
 * Debian's HAProxy in the foreground with native-config/haproxy.cfg exactly as shipped, the centrals' addresses
 * given through its environment, on a loopback port. Resolves once it answers.
 */
export async function startHaproxy(centralPorts: number[], extraEnv: Record<string, string> = {}): Promise<Balancer> {
  const port = await freePort();
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...extraEnv };
  env.CENTRAL_BIND = `127.0.0.1:${port}`;
  centralPorts.forEach((p, i) => {
    env[`CENTRAL_${i + 1}`] = `127.0.0.1:${p}`;
  });
  const proc: ChildProcess = spawn('haproxy', ['-db', '-f', join(root, 'native-config/haproxy.cfg')], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const logs: string[] = [];
  createInterface({ input: proc.stderr! }).on('line', (l) => logs.push(l));
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;
  const until = Date.now() + 10_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`haproxy exited ${proc.exitCode}:\n${logs.join('\n')}`);
    if (Date.now() > until) {
      proc.kill('SIGKILL');
      throw new Error(`haproxy did not answer:\n${logs.join('\n')}`);
    }
    const up = await fetch(url('/healthz')).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    logs,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}
