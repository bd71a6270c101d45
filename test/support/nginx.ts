import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export interface Nginx {
  /** The URL of `path` through the server block in front of `upstreams[i]`. */
  url(i: number, path: string): string;
  wsUrl(i: number, path: string): string;
  /** The access log so far (combined format: the request line, query string included). */
  accessLog(): string;
  stop(): Promise<void>;
}

/** A box behind nginx: its port, and directives for its location besides the ones docs/api.md shows. */
export interface Upstream {
  port: number;
  extra?: string;
}

/**
 * Debian's nginx in the foreground (`daemon off`), with its own prefix, pid, logs and temp paths in a temp dir,
 * one loopback server block in front of each upstream, configured as docs/api.md "Behind a reverse proxy
 * (nginx)" shows, X-Forwarded-For included.
 */
export async function startNginx(upstreams: Upstream[]): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), 'vb-nginx-'));
  const ports = await Promise.all(upstreams.map(() => freePort()));
  const servers = upstreams.map(
    (upstream, i) => `
    server {
      listen 127.0.0.1:${ports[i]};
      location / {
        proxy_pass http://127.0.0.1:${upstream.port};
        proxy_http_version 1.1;
        proxy_set_header Host $host;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $connection_upgrade;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_read_timeout 300s;
        ${upstream.extra ?? ''}
      }
    }`,
  );
  writeFileSync(join(dir, 'nginx.conf'), nginxConf(dir, servers.join('\n')));
  const proc: ChildProcess = spawn('nginx', ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  const errorLog = () => {
    try {
      return readFileSync(join(dir, 'error.log'), 'utf8');
    } catch {
      return '';
    }
  };
  const until = Date.now() + 10_000;
  for (const port of ports) {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`nginx exited ${proc.exitCode}:\n${stderr}\n${errorLog()}`);
      if (Date.now() > until) {
        proc.kill('SIGKILL');
        throw new Error(`nginx did not listen:\n${stderr}\n${errorLog()}`);
      }
      const up = await new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1', () => {
          s.destroy();
          resolve(true);
        }).on('error', () => resolve(false));
      });
      if (up) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url: (i, path) => `http://127.0.0.1:${ports[i]}${path}`,
    wsUrl: (i, path) => `ws://127.0.0.1:${ports[i]}${path}`,
    accessLog: () => readFileSync(join(dir, 'access.log'), 'utf8'),
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * An nginx.conf whose pid, logs and temp paths are all in `dir` (as root, in the foreground), with the server
 * blocks given and the upgrade map the socket's block uses.
 */
export function nginxConf(dir: string, servers: string): string {
  return `daemon off;
user root;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 256; }
http {
  access_log ${dir}/access.log combined;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  map $http_upgrade $connection_upgrade { default upgrade; '' close; }
${servers}
}
`;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * An HTTP request from a chosen loopback source address: all of 127.0.0.0/8 reaches a server on 127.0.0.1, so one
 * machine plays several clients, each with its own address as nginx and the box see it.
 */
export function requestFrom(
  localAddress: string,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = request(url, { method: options.method ?? 'GET', localAddress, agent: false, headers }, (res) => {
      let text = '';
      res
        .setEncoding('utf8')
        .on('data', (chunk: string) => (text += chunk))
        .on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject).end(options.body);
  });
}
