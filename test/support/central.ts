import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { inject } from 'vitest';
import { runCliAsync } from './cli.js';
import demo from '../../native-config/demo.json';

export const CENTRAL_DEMO = {
  tenant: demo.tenants[0]!.id,
  client: demo.tenants[0]!.clients[0]!,
  venues: demo.tenants[0]!.venues.map((v) => v.id),
  warehouses: demo.tenants[0]!.warehouses.map((w) => w.id),
  hqUser: { username: 'centrala', password: 'centrala-demo-1' },
};

declare module 'vitest' {
  interface ProvidedContext {
    /** A superuser's URL of the run's Debian PostgreSQL 15 (test/pg15-setup.ts): centrals run on it, by URL. */
    debianPostgres?: string;
  }
}

export interface TestCentral {
  port: number;
  dataDir: string;
  /** The central's database: the embedded cluster's, or its own database on the run's external PostgreSQL. */
  databaseUrl: string;
  proc: ChildProcess;
  logs: string[];
  url(path: string): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** A one-time enrolment code from `venue-box central enrol` (the demo tenant). */
  enrolCode(venueId: string): Promise<string>;
  /** An access token of the demo HQ user (centrala). */
  hqToken(): Promise<string>;
  /** GET an HQ route with a fresh-enough token; the parsed body, or an Error naming status and body. */
  hq(path: string): Promise<any>;
}

/** The database of each data directory whose central runs on the external PostgreSQL: a restart finds it again. */
const externalDatabases = new Map<string, string>();

/**
 * Runs `venue-box central ARGS` (the bundle) and returns its exit code, stdout and stderr. A command given the
 * data directory of a central on the external PostgreSQL is given that central's `--database-url` too, as an
 * operator would. `timeoutMs`: runCliAsync's, for a command that works for a while (a release's patches).
 */
export const centralCli = (args: string[], timeoutMs?: number) => {
  const dataDir = optionOf(args, '--data-dir');
  const url = dataDir === undefined ? undefined : externalDatabases.get(dataDir);
  return runCliAsync(['central', ...args, ...(url ? ['--database-url', url] : [])], timeoutMs);
};

/** A database of its own on the run's external PostgreSQL for the central of `dataDir`; undefined: embedded. */
async function externalDatabaseFor(dataDir: string): Promise<string | undefined> {
  const admin = inject('debianPostgres');
  if (!admin) return undefined;
  const known = externalDatabases.get(dataDir);
  if (known) return known;
  const name = `central_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  externalDatabases.set(dataDir, url.toString());
  return url.toString();
}

/** The value after `name` in `args`, if it is there. */
const optionOf = (args: string[] | undefined, name: string): string | undefined => {
  const at = args?.indexOf(name) ?? -1;
  return at >= 0 ? args![at + 1] : undefined;
};

/** The embedded cluster's URL from its connection facts (src/central/db/embedded.ts). */
function embeddedUrl(dataDir: string): string {
  const facts = JSON.parse(readFileSync(join(dataDir, 'central-db.json'), 'utf8')) as {
    user: string;
    password: string;
    port: number;
  };
  return `postgres://${facts.user}:${encodeURIComponent(facts.password)}@127.0.0.1:${facts.port}/postgres`;
}

/** Starts the real central (dist/main.cjs central serve) on port 0 and waits for "central listening". */
export async function startTestCentral(
  options: { dataDir?: string; demo?: boolean; refreshRetryGraceSeconds?: number; args?: string[] } = {},
): Promise<TestCentral> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'vb-central-'));
  const args = ['dist/main.cjs', 'central', 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir];
  if (options.demo !== false) args.push('--demo');
  // A test that names the database (a second process on another's) gets that one.
  const external = options.args?.includes('--database-url') ? undefined : await externalDatabaseFor(dataDir);
  if (external) args.push('--database-url', external);
  // No retry grace unless asked: tests present spent refresh tokens at once (the grace: test/central-auth.test.ts).
  args.push('--refresh-retry-grace-seconds', String(options.refreshRetryGraceSeconds ?? 0), ...(options.args ?? []));
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  createInterface({ input: proc.stderr! }).on('line', (line) => logs.push(line));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`central did not start:\n${logs.join('\n')}`)), 30_000);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      logs.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === 'central listening') {
          clearTimeout(timer);
          resolve(entry.port!);
        }
      } catch {
        // not a log line
      }
    });
    void exited.then((code) => reject(new Error(`central exited with ${code}:\n${logs.join('\n')}`)));
  });
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;
  let token: string | undefined;
  const central: TestCentral = {
    port,
    dataDir,
    databaseUrl: external ?? optionOf(options.args, '--database-url') ?? embeddedUrl(dataDir),
    proc,
    logs,
    url,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
    async enrolCode(venueId) {
      const r = await centralCli(['enrol', '--data-dir', dataDir, '--tenant', CENTRAL_DEMO.tenant, '--venue', venueId]);
      if (r.code !== 0) throw new Error(`central enrol exited ${r.code}: ${r.stderr}`);
      return r.stdout.trim().split('\n').pop()!;
    },
    async hqToken() {
      const res = await hqTokenRequest(central, CENTRAL_DEMO.hqUser.username, CENTRAL_DEMO.hqUser.password);
      if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { access_token: string }).access_token;
    },
    async hq(path) {
      token ??= await central.hqToken();
      const res = await fetch(url(path), { headers: { authorization: `Bearer ${token}` } });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text}`);
      return JSON.parse(text);
    },
  };
  return central;
}

/** A form posted to the central's token endpoint, with the demo client's Basic credentials and tenant. */
export function centralTokenRequest(
  central: { url(path: string): string },
  form: Record<string, string>,
): Promise<Response> {
  const basic = Buffer.from(`${CENTRAL_DEMO.client.clientId}:${CENTRAL_DEMO.client.clientSecret}`).toString('base64');
  return fetch(central.url('/auth-oauth2/oauth/token'), {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-tenant': CENTRAL_DEMO.tenant,
      authorization: `Basic ${basic}`,
    },
    body: new URLSearchParams(form).toString(),
  });
}

/** The password grant at the central's token endpoint, with the demo client. */
export const hqTokenRequest = (central: { url(path: string): string }, username: string, password: string) =>
  centralTokenRequest(central, { grant_type: 'password', username, password });
