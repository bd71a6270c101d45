import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import {
  CENTRAL_DEMO,
  centralCli,
  centralTokenRequest,
  hqTokenRequest,
  startTestCentral,
  type TestCentral,
} from './support/central.js';
import { loadOrCreateKey } from '../src/shared/jwt.js';
import { freePort } from './support/ports.js';
import { SimDevice } from './support/sim-device.js';

// Central processes on one database share everything a request needs (docs/sync.md "Running it"): any of them
// answers any request. `a` runs the embedded cluster (or its own database on Debian's PostgreSQL 15 in the
// central-pg15 project); `b` is a second process on the same database by URL.
let a: TestCentral;
let b: TestCentral;
beforeAll(async () => {
  a = await startTestCentral();
  b = await startTestCentral({ args: ['--database-url', a.databaseUrl] });
}, 60_000);
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

async function signIn(central: TestCentral): Promise<{ access_token: string; refresh_token: string }> {
  const res = await hqTokenRequest(central, CENTRAL_DEMO.hqUser.username, CENTRAL_DEMO.hqUser.password);
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; refresh_token: string };
}
const hqGet = (central: TestCentral, path: string, token: string) =>
  fetch(central.url(`/hq-api/api${path}`), { headers: { authorization: `Bearer ${token}` } });

describe('two central processes on one database', () => {
  test('a token of one is good at the other; a refresh at one rotates for both; a restart keeps them', async () => {
    const tokens = await signIn(a);
    expect((await hqGet(b, '/devices', tokens.access_token)).status).toBe(200);
    const refreshed = await centralTokenRequest(b, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as { access_token: string; refresh_token: string };
    expect((await hqGet(a, '/devices', next.access_token)).status).toBe(200);
    // The spent refresh token presented to the other process is reuse: the family is revoked everywhere.
    const reused = await centralTokenRequest(a, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(reused.status).toBe(400);
    const again = await centralTokenRequest(b, { grant_type: 'refresh_token', refresh_token: next.refresh_token });
    expect(again.status).toBe(400);

    // A restarted process signs and verifies with the same key: nobody is signed out.
    const kept = await signIn(b);
    await b.stop();
    b = await startTestCentral({ dataDir: b.dataDir, args: ['--database-url', a.databaseUrl] });
    expect((await hqGet(b, '/devices', kept.access_token)).status).toBe(200);
    expect((await hqGet(a, '/devices', kept.access_token)).status).toBe(200);
  });

  test("a box's long poll at one process wakes at a price changed through the other", async () => {
    const token = (await signIn(a)).access_token;
    const code = await fetch(a.url('/hq-api/api/enrol-codes'), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ venueId: CENTRAL_DEMO.venues[0] }),
    });
    const box = new SimDevice(b.url(''));
    expect((await box.enrol(((await code.json()) as { code: string }).code)).status).toBe(201);
    const first = await box.catalogue(0, 0, true);
    expect(first.status).toBe(200);
    const rev = (first.body as { rev: number }).rev;

    const started = Date.now();
    const poll = box.catalogue(rev, 20);
    await new Promise((r) => setTimeout(r, 1000)); // the poll is waiting at b
    const patched = await fetch(a.url('/hq-api/api/products/zurek/price'), {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ price: '31.50' }),
    });
    expect(patched.status).toBe(200);
    const answer = await poll;
    expect(answer.status).toBe(200);
    expect((answer.body as { rev: number }).rev).toBeGreaterThan(rev);
    // Woken by the notification, not by the poll's 20 s timeout.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test('/readyz of each says ready with the database it checked; /healthz needs no token', async () => {
    for (const central of [a, b]) {
      const res = await fetch(central.url('/readyz'));
      expect(res.status).toBe(200);
      const body = (await res.json()) as { status: string; database: { schema: number }; listening: boolean };
      expect(body).toMatchObject({ status: 'ready', listening: true });
      expect(body.database.schema).toBeGreaterThanOrEqual(10);
      expect((await fetch(central.url('/healthz'))).status).toBe(200);
    }
  });

  test('the PostgreSQL it was given: Debian 15 in the central-pg15 project', async () => {
    const client = new pg.Client({ connectionString: a.databaseUrl });
    await client.connect();
    const { rows } = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v");
    await client.end();
    if (inject('debianPostgres')) expect(rows[0]!.v).toMatch(/^15\./);
    else expect(Number.parseInt(rows[0]!.v, 10)).toBeGreaterThanOrEqual(15);
  });
});

describe('a central whose data directory has a token key (before keys lived in the database)', () => {
  test('its key moves into the database and signs as before: the tokens it issued stay good', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vb-central-'));
    const key = loadOrCreateKey(dataDir);
    const old = await startTestCentral({ dataDir });
    try {
      const { access_token } = await signIn(old);
      const header = JSON.parse(Buffer.from(access_token.split('.')[0]!, 'base64url').toString('utf8'));
      expect(header.kid).toBe(key.kid);
      expect(old.logs.some((l) => l.includes('token signing key stored in the database'))).toBe(true);
    } finally {
      await old.stop();
    }
  });
});

describe('a central started wrong: one line and an exit code that says whose move it is', () => {
  test('a wrong password or database is 78 (a person must fix the URL); no server there is 69', async () => {
    const wrong = new URL(a.databaseUrl);
    wrong.password = 'not-the-password';
    const denied = await startTestCentral({ demo: false, args: ['--database-url', wrong.toString()] }).catch(
      (e: unknown) => e as Error,
    );
    expect(String(denied)).toMatch(/central exited with 78/);
    expect(String(denied)).toMatch(/the central's database refused the connection: .*check --database-url/);
    expect(String(denied)).not.toMatch(/\n\s+at /); // no stack trace
    const away = new URL(a.databaseUrl);
    away.port = String(await freePort());
    const refused = await startTestCentral({ demo: false, args: ['--database-url', away.toString()] }).catch(
      (e: unknown) => e as Error,
    );
    expect(String(refused)).toMatch(/central exited with 69/);
    expect(String(refused)).toMatch(/the central's database is not reachable/);
  });

  test('a command on the data dir of a central on its own PostgreSQL, without --database-url: 66, no new cluster', async () => {
    const r = await centralCli(['devices', '--data-dir', b.dataDir]);
    expect(r.code).toBe(66);
    expect(r.stderr).toMatch(/no central database in .*--database-url/);
    expect(existsSync(join(b.dataDir, 'postgres'))).toBe(false);
  });
});

describe('a database user without the rights the central needs', () => {
  test('one that may not create tables in a new database: exit 78 at start, naming what it lacks', async () => {
    const admin = new pg.Client({ connectionString: a.databaseUrl });
    await admin.connect();
    const role = `visitor_${Date.now()}`;
    const database = `empty_${Date.now()}`;
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'visitor-pw-1'`);
      await admin.query(`CREATE DATABASE ${database}`);
      await admin.query(`GRANT CONNECT ON DATABASE ${database} TO ${role}`);
      const url = new URL(a.databaseUrl);
      url.username = role;
      url.password = 'visitor-pw-1';
      url.pathname = `/${database}`;
      const err = (await startTestCentral({ demo: false, args: ['--database-url', url.toString()] }).then(
        () => undefined,
        (e: unknown) => e as Error,
      )) as Error;
      expect(err?.message).toMatch(/central exited with 78/);
      expect(err.message).toMatch(/the database user cannot migrate its schema/);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
      await admin.end();
    }
  });

  test('one that may read and write but not create partitions: exit 78 at start, naming what it lacks', async () => {
    const admin = new pg.Client({ connectionString: a.databaseUrl });
    await admin.connect();
    const role = `app_${Date.now()}`;
    const database = new URL(a.databaseUrl).pathname.slice(1);
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app-pw-1'`);
      await admin.query(`GRANT CONNECT ON DATABASE ${database} TO ${role}`);
      await admin.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
      await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await admin.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
      const url = new URL(a.databaseUrl);
      url.username = role;
      url.password = 'app-pw-1';
      const started = startTestCentral({ demo: false, args: ['--database-url', url.toString()] });
      const err = (await started.then(
        () => undefined,
        (e: unknown) => e as Error,
      )) as Error;
      expect(err?.message).toMatch(/central exited with 78/);
      expect(err.message).toMatch(/cannot create the monthly partitions of sync_events/);
      expect(err.message).toMatch(/docs\/sync\.md "Several central processes"/);
    } finally {
      await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
      await admin.end();
    }
  });
});
