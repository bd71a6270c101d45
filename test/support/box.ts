import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'vitest';
import demo from '../../native-config/demo.json';

export const DEMO = {
  tenant: demo.tenants[0]!.id,
  client: demo.tenants[0]!.clients[0]!,
  staff: demo.tenants[0]!.users[0]!,
  venues: demo.tenants[0]!.venues,
  /** Open 00:00-24:00 on every channel. */
  openVenue: demo.tenants[0]!.venues[0]!.id,
  menu: demo.tenants[0]!.menus[0]!.id,
};

/** Config for tests that drive customers' commands as fast as the box answers (no customer rate, no write budget). */
const UNLIMITED_WRITES = { burstBytes: 1024 * 1024 * 1024, bytesPerMinute: 1024 * 1024 * 1024 };
export const UNLIMITED_CUSTOMER = {
  ordering: {
    customerCommandRate: { burst: 1_000_000, refillSeconds: 0.000001 },
    addressWriteRate: UNLIMITED_WRITES,
    venueWriteRate: UNLIMITED_WRITES,
  },
};

export interface TestBox {
  port: number;
  dataDir: string;
  proc: ChildProcess;
  logs: string[];
  url(path: string): string;
  wsUrl(path: string): string;
  token(username?: string, password?: string): Promise<TokenBody>;
  get(path: string, token?: string, headers?: Record<string, string>): Promise<Response>;
  post(path: string, token: string | undefined, body: unknown, headers?: Record<string, string>): Promise<Response>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The box's log entries: its log is JSON lines, and `logs` holds the other lines of its stderr too. */
export const jsonLogs = (box: Pick<TestBox, 'logs'>): Record<string, unknown>[] =>
  box.logs.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

export interface TokenBody {
  access_token: string;
  refresh_token: string;
  UUID: string;
  TENANT: string;
  scope: string;
  expires_in: number;
  jti: string;
  token_type: string;
}

export interface StartOptions {
  dataDir?: string;
  config?: Record<string, unknown>;
  demo?: boolean;
  /** Extra environment for the box process (e.g. libfaketime's, to move its clock). */
  env?: NodeJS.ProcessEnv;
  /** Starts it pinned to these cores (taskset's list, e.g. "0"), so that it counts them from its start. */
  cores?: string;
  /** A fixed port (default 0: a free one), for a box another reaches at a known address (a standby's pair). */
  port?: number;
}

/** Starts the real box (dist/main.cjs) on port 0 with a temp data dir and waits for "listening". */
export async function startTestBox(options: StartOptions = {}): Promise<TestBox> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'vb-test-'));
  const args = [
    'dist/main.cjs',
    'serve',
    '--port',
    String(options.port ?? 0),
    '--host',
    '127.0.0.1',
    '--data-dir',
    dataDir,
  ];
  if (options.demo !== false) args.push('--demo');
  if (options.config) {
    const file = join(dataDir, '..', `${dataDir.split('/').pop()}-config.json`);
    writeFileSync(file, JSON.stringify(options.config));
    args.push('--config', file);
  }
  const [command, argv] =
    options.cores === undefined
      ? [process.execPath, args]
      : ['taskset', ['-c', options.cores, process.execPath, ...args]];
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
  const { proc, logs, port, exited } = await launch(child, 'box');
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;
  const auth = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});
  const box: TestBox = {
    port,
    dataDir,
    proc,
    logs,
    url,
    wsUrl: (path) => `ws://127.0.0.1:${port}${path}`,
    async token(username = 'anonymous', password = '') {
      const res = await requestToken(box, { grant_type: 'password', username, password });
      if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
      return (await res.json()) as TokenBody;
    },
    get: (path, token, headers = {}) => fetch(url(path), { headers: { ...auth(token), ...headers } }),
    post: (path, token, body, headers = {}) =>
      fetch(url(path), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth(token), ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
  return box;
}

export const basic = (id = DEMO.client.clientId, secret = DEMO.client.clientSecret): string =>
  `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

export function requestToken(
  box: { url(path: string): string },
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(box.url('/auth-oauth2/oauth/token'), {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded;charset=UTF-8',
      'x-tenant': DEMO.tenant,
      authorization: basic(),
      ...headers,
    },
    body: new URLSearchParams(form).toString(),
  });
}

export interface Launched {
  proc: ChildProcess;
  logs: string[];
  port: number;
  exited: Promise<number | null>;
}

/**
 * The boxes (the bundle or the binary) this test file started that have not exited yet, with the test that started
 * each: test/support/leftover-boxes.ts ends what a file's tests left running.
 */
export const liveBoxes = new Map<ChildProcess, string>();

/** Collects a started box's log lines and waits for its "venue-box listening" line (the node bundle or the binary). */
export async function launch(proc: ChildProcess, what: string, startTimeoutMs = 20_000): Promise<Launched> {
  const logs: string[] = [];
  liveBoxes.set(proc, expect.getState().currentTestName ?? 'a beforeAll');
  const exited = new Promise<number | null>((resolve) =>
    proc.on('exit', (code) => {
      liveBoxes.delete(proc);
      resolve(code);
    }),
  );
  createInterface({ input: proc.stderr! }).on('line', (line) => logs.push(line));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running behind the failed test.
      proc.kill('SIGKILL');
      reject(new Error(`${what} did not start:\n${logs.join('\n')}`));
    }, startTimeoutMs);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      logs.push(line);
      const entry = JSON.parse(line) as { msg?: string; port?: number };
      if (entry.msg === 'venue-box listening') {
        clearTimeout(timer);
        resolve(entry.port!);
      }
    });
    void exited.then((code) => reject(new Error(`${what} exited with ${code}:\n${logs.join('\n')}`)));
  });
  return { proc, logs, port, exited };
}

/** The token endpoint's answer as the throttling tests read it. */
export interface TokenAnswer {
  status: number;
  retryAfter: string | undefined;
  /** The first Set-Cookie (a staff sign-in's device cookie, docs/api.md "Known devices: device tokens"). */
  setCookie: string | undefined;
  body: {
    error?: string;
    error_description?: string;
    access_token?: string;
    refresh_token?: string;
    scope?: string;
    device_token?: string;
  };
}

/**
 * A token request from a chosen source address: all of 127.0.0.0/8 reaches the box listening on 127.0.0.1,
 * so one test machine plays several clients of the venue LAN (the box's throttles key on the peer address).
 */
export function tokenFrom(
  box: TestBox,
  localAddress: string,
  form: Record<string, string>,
  authorization = basic(),
  headers: Record<string, string> = {},
): Promise<TokenAnswer> {
  const body = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const req = request(
      box.url('/auth-oauth2/oauth/token'),
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          'x-tenant': DEMO.tenant,
          authorization,
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (chunk: string) => (text += chunk))
          .on('end', () => {
            const retryAfter = res.headers['retry-after'];
            resolve({
              status: res.statusCode ?? 0,
              retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
              setCookie: res.headers['set-cookie']?.[0],
              body: JSON.parse(text) as TokenAnswer['body'],
            });
          });
      },
    );
    req.on('error', reject).end(body);
  });
}
