import { request } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import {
  CENTRAL_DEMO,
  centralTokenRequest,
  hqTokenRequest,
  startTestCentral,
  type TestCentral,
} from './support/central.js';
import { type DebianPostgres, startDebianPostgres } from './support/debian-postgres.js';
import { type Balancer, startHaproxy } from './support/haproxy.js';
import { freePort } from './support/ports.js';
import { command, newOrder } from './support/orders.js';
import { SimDevice } from './support/sim-device.js';
import { drained, enrol, FAST_SYNC, syncStatus, waitFor } from './support/sync.js';
import { skipWithout } from './support/system-packages.js';

// Three central processes on Debian's PostgreSQL 15 behind HAProxy with native-config/haproxy.cfg as shipped
// (docs/sync.md "Running it"): a real box, simulated boxes and headquarters all through the balancer while
// processes are killed and restarted and while PostgreSQL restarts.
const skip = skipWithout(import.meta.url, 'haproxy', 'postgresql-15');

let database: DebianPostgres;
let url: string;
let ports: number[] = [];
const centrals: TestCentral[] = [];
let lb: Balancer;
let box: TestBox;
let hqRefresh: string;

/** Central `i` on its fixed port (the balancer's server line names it), on the shared database by URL. */
const startCentral = (i: number, dataDir?: string) =>
  startTestCentral({
    dataDir,
    demo: i === 0,
    // The default retry grace, as in production: a refresh whose answer a killed process lost is retried.
    refreshRetryGraceSeconds: 30,
    // HAProxy connects from loopback's first address; clients come from others (127.0.0.2, ...) in the test below.
    args: ['--database-url', url, '--port', String(ports[i]), '--trusted-proxies', '127.0.0.1'],
  });

beforeAll(async () => {
  if (skip) return;
  database = await startDebianPostgres();
  const admin = new pg.Client({ connectionString: database.url() });
  await admin.connect();
  // As docs/sync.md "Several central processes" sets it up: no superuser, a role that owns its database.
  await admin.query("CREATE ROLE venue_box LOGIN PASSWORD 'change-me'");
  await admin.query('CREATE DATABASE central OWNER venue_box');
  await admin.end();
  url = `postgres://venue_box:change-me@127.0.0.1:${database.port}/central`;
  ports = [await freePort(), await freePort(), await freePort()];
  for (const i of [0, 1, 2]) centrals[i] = await startCentral(i);
  lb = await startHaproxy(ports);
  const res = await hqTokenRequest(lb, CENTRAL_DEMO.hqUser.username, CENTRAL_DEMO.hqUser.password);
  hqRefresh = ((await res.json()) as { refresh_token: string }).refresh_token;
  box = await startTestBox({ config: { sync: { ...FAST_SYNC.sync, catalogueWaitSeconds: 20 } } });
  await enrol(box, lb.url(''), await enrolCode());
}, 120_000);
afterAll(async () => {
  await box?.stop();
  await lb?.stop();
  for (const c of centrals) await c?.stop();
  database?.stop();
});

/** Statuses seen, by what asked: `hq 200`, `batch 503`... */
const seen = new Map<string, number>();
const count = (what: string, status: number | string) =>
  seen.set(`${what} ${status}`, (seen.get(`${what} ${status}`) ?? 0) + 1);

/** Headquarters: a fresh access token from the refresh token (rotated), retried over 502/503 as a client does. */
async function hqAccess(): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const res = await centralTokenRequest(lb, { grant_type: 'refresh_token', refresh_token: hqRefresh }).catch(
      () => undefined,
    );
    count('refresh', res?.status ?? 'reset');
    if (res?.status === 200) {
      const body = (await res.json()) as { access_token: string; refresh_token: string };
      hqRefresh = body.refresh_token;
      return body.access_token;
    }
    // Signed out: a refresh refused as invalid. Anything else is the balancer's or a stopping process's.
    if (res && res.status < 500) throw new Error(`refresh refused: ${res.status} ${await res.text()}`);
    if (attempt > 150) throw new Error('refresh kept failing for 30 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function enrolCode(): Promise<string> {
  const res = await fetch(lb.url('/hq-api/api/enrol-codes'), {
    method: 'POST',
    headers: { authorization: `Bearer ${await hqAccess()}`, 'content-type': 'application/json' },
    body: JSON.stringify({ venueId: DEMO.openVenue }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { code: string }).code;
}

/** Sends all of `d`'s events in batches of `size` with pauses, retrying as a box does; answers counted. */
async function sendAll(d: SimDevice, size: number, pauseMs: number): Promise<void> {
  for (let seq = 1; seq <= d.lastSeq; ) {
    const to = Math.min(d.lastSeq, seq + size - 1);
    const a = await d.send(seq, to).catch(() => undefined);
    count('batch', a?.status ?? 'reset');
    if (a?.status === 200) seq = to + 1;
    else if (a?.status === 409) seq = a.body.expectedSeq;
    else if (a && ![429, 502, 503, 504].includes(a.status))
      throw new Error(`batch: ${a.status} ${JSON.stringify(a.body)}`);
    else await new Promise((r) => setTimeout(r, a?.headers.get('retry-after') ? 300 : 100));
    await new Promise((r) => setTimeout(r, pauseMs));
  }
}

/** Headquarters reading orders every 50 ms until `until` resolves; a 401 is a signed-out user. */
async function hqReads(until: Promise<unknown>): Promise<void> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  let token = await hqAccess();
  for (let i = 0; !done; i++) {
    if (i % 20 === 19) token = await hqAccess();
    const res = await fetch(lb.url('/hq-api/api/orders?limit=5'), {
      headers: { authorization: `Bearer ${token}` },
    }).catch(() => undefined);
    count('hq', res?.status ?? 'reset');
    await res?.text();
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Each event of `d` at the central exactly once, in order: the device's head is its last seq. */
async function atCentralOnce(d: SimDevice): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ n: number; distinct: number; max: number }>(
    'SELECT count(*)::int AS n, count(DISTINCT seq)::int AS distinct, max(seq)::int AS max FROM sync_events WHERE device_id = $1',
    [d.deviceId],
  );
  await client.end();
  expect(rows[0]).toEqual({ n: d.lastSeq, distinct: d.lastSeq, max: d.lastSeq });
}

async function simDevices(n: number, events: number): Promise<SimDevice[]> {
  const sims: SimDevice[] = [];
  for (let i = 0; i < n; i++) {
    const d = new SimDevice(lb.url(''));
    expect((await d.enrol(await enrolCode(), `sim-${i}`)).status).toBe(201);
    for (let e = 0; e < events; e++) d.order();
    sims.push(d);
  }
  return sims;
}

/** Orders placed on the real box every 100 ms until `until` resolves; their ids. */
async function orders(until: Promise<unknown>): Promise<string[]> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  // A waiter: a customer may have only so many open orders.
  const token = (await box.token(DEMO.staff.username, DEMO.staff.password)).access_token;
  const ids: string[] = [];
  while (!done) {
    ids.push(
      (await command(box, token, 'new', newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 1 }]))).orderId,
    );
    await new Promise((r) => setTimeout(r, 100));
  }
  return ids;
}

describe.skipIf(skip)('three centrals behind HAProxy on Debian PostgreSQL 15', () => {
  test('processes killed (-9) and restarted under load: nothing lost or doubled, nobody signed out', async () => {
    seen.clear();
    // About 8 s of batches: the faults below fall inside it.
    const sims = await simDevices(3, 5000);
    const sending = Promise.all(sims.map((d) => sendAll(d, 50, 60)));
    const placed = orders(sending);
    const reading = hqReads(sending);
    await new Promise((r) => setTimeout(r, 1500));
    // Killed mid-batch: the batches it held are retried into another process; its connections' work rolls back.
    await centrals[1]!.stop('SIGKILL');
    await new Promise((r) => setTimeout(r, 1500));
    centrals[1] = await startCentral(1, centrals[1]!.dataDir);
    // A clean restart: it stops taking requests (503, /readyz too), finishes what it holds, and comes back.
    await centrals[2]!.stop('SIGTERM');
    centrals[2] = await startCentral(2, centrals[2]!.dataDir);
    await sending;
    const ids = await placed;
    await reading;

    for (const d of sims) await atCentralOnce(d);
    await drained(box);
    const hqIds = new Set<string>();
    for (let after = ''; ; ) {
      const page = (await (
        await fetch(lb.url(`/hq-api/api/orders?venueId=${DEMO.openVenue}&limit=200${after}`), {
          headers: { authorization: `Bearer ${await hqAccess()}` },
        })
      ).json()) as { items: { id: string }[]; next: string | null };
      for (const o of page.items) hqIds.add(o.id);
      if (!page.next) break;
      after = `&after=${encodeURIComponent(page.next)}`;
    }
    expect(ids.length).toBeGreaterThan(20);
    expect(
      ids.filter((id) => !hqIds.has(id)),
      `of ${ids.length}, ${hqIds.size} at the central`,
    ).toEqual([]);
    const statuses = Object.fromEntries(seen);
    console.log('answers through the balancer:', statuses);
    // Nobody was signed out, and no process answered 500: only the retryable answers of a process going away.
    for (const key of Object.keys(statuses)) expect(key).toMatch(/ (200|201|409|429|502|503|504|reset)$/);
    expect(statuses['hq 401']).toBeUndefined();
    expect(statuses['batch 200']).toBeGreaterThanOrEqual(3 * 100);
  }, 120_000);

  test('PostgreSQL restarted under load: /readyz says not ready meanwhile, no 500, everything lands after', async () => {
    seen.clear();
    const sims = await simDevices(2, 1000);
    const sending = Promise.all(sims.map((d) => sendAll(d, 50, 30)));
    const reading = hqReads(sending);
    await new Promise((r) => setTimeout(r, 1000));
    await database.stopServer();
    const notReady = await Promise.all(
      centrals.map((c) =>
        waitFor(
          `central ${c.port} not ready`,
          async () => {
            const res = await fetch(c.url('/readyz')).catch((err: unknown) => {
              throw new Error(`${String(err)} exit ${c.proc.exitCode} ${c.logs.slice(-40).join('\n')}`);
            });
            const text = await res.text();
            if (res.status === 503) return c;
            throw new Error(`${res.status} ${text}`);
          },
          10_000,
        ),
      ),
    );
    expect(notReady).toHaveLength(3);
    // The balancer holds back: with no process ready, it answers 503 itself.
    await waitFor('the balancer to hold back', async () => (await fetch(lb.url('/readyz'))).status === 503, 5000);
    await new Promise((r) => setTimeout(r, 2000));
    await database.startServer();
    for (const c of centrals)
      await waitFor(`central ${c.port} ready`, async () => (await fetch(c.url('/readyz'))).status === 200, 20_000);
    await sending;
    await reading;
    for (const d of sims) await atCentralOnce(d);
    const statuses = Object.fromEntries(seen);
    console.log('answers through the balancer while PostgreSQL restarted:', statuses);
    // What a 500 was, from the centrals' logs, so that a failure here names its cause.
    const failed = centrals.flatMap((c) => c.logs.filter((l) => l.includes('"request failed"')));
    expect(failed.map((l) => l.slice(0, 600))).toEqual([]);
    for (const key of Object.keys(statuses)) expect(key).toMatch(/ (200|201|409|429|502|503|504|reset)$/);
    expect(statuses['hq 401']).toBeUndefined();
    // The box's real long poll came through it all: a price changed now reaches its menu.
    const before = (await syncStatus(box)).catalogue?.rev ?? 0;
    const patched = await fetch(lb.url('/hq-api/api/products/zurek/price'), {
      method: 'PATCH',
      headers: { authorization: `Bearer ${await hqAccess()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ price: '19.99' }),
    });
    expect(patched.status).toBe(200);
    await waitFor('the box at the new rev', async () => ((await syncStatus(box)).catalogue?.rev ?? 0) > before, 30_000);
    expect((await syncStatus(box)).catalogue?.lastError ?? null).toBeNull();
  }, 120_000);
});

describe.skipIf(skip)('a balancer that cuts long polls sooner than the box waits', () => {
  test('the box asks for shorter waits once cut twice alike: no catalogue error left, changes still arrive', async () => {
    const cutting = await startHaproxy(ports, { CENTRAL_TIMEOUT_SERVER: '7s' });
    const other = await startTestBox({ config: { sync: { ...FAST_SYNC.sync, catalogueWaitSeconds: 20 } } });
    try {
      await enrol(other, cutting.url(''), await enrolCode());
      const cuts = () => other.logs.filter((l) => l.includes('catalogue polls are cut on their way'));
      // The first cut is an ordinary failure; the second, at the same moment, is the balancer's timeout.
      await waitFor('the second cut', () => cuts().length === 1, 30_000);
      expect(JSON.parse(cuts()[0]!)).toMatchObject({ waitSeconds: 5 });
      // Polls of 5 s now end before the balancer's 7 s: no further cut, and nothing recorded as an error.
      await new Promise((r) => setTimeout(r, 8000));
      expect(cuts()).toHaveLength(1);
      expect((await syncStatus(other)).catalogue?.lastError ?? null).toBeNull();
      const before = (await syncStatus(other)).catalogue?.rev ?? 0;
      const patched = await fetch(cutting.url('/hq-api/api/products/zurek/price'), {
        method: 'PATCH',
        headers: { authorization: `Bearer ${await hqAccess()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ price: '21.50' }),
      });
      expect(patched.status).toBe(200);
      await waitFor(
        'the change at the box',
        async () => ((await syncStatus(other)).catalogue?.rev ?? 0) > before,
        10_000,
      );
    } finally {
      await other.stop();
      await cutting.stop();
    }
  }, 60_000);
});

describe.skipIf(skip)('clients behind the balancer, each by its own address', () => {
  test("one client's wrong enrolment codes do not hold another's enrolment; a forged header changes nothing", async () => {
    /** POST /sync-api/api/enrol through the balancer from the loopback address `from`; the status. */
    const enrolFrom = (from: string, code: string, headers: Record<string, string> = {}) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify({
          code,
          publicKey: Buffer.from(new SimDevice('').keys.publicKey).toString('base64'),
        });
        const req = request(
          lb.url('/sync-api/api/enrol'),
          { method: 'POST', localAddress: from, headers: { 'content-type': 'application/json', ...headers } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    // Every process ready and taken back by the balancer (2 checks a second apart), whatever ran before.
    for (const c of centrals) await waitFor('ready', async () => (await fetch(c.url('/readyz'))).status === 200);
    await new Promise((r) => setTimeout(r, 2500));
    const guesser = '127.0.0.2';
    const statuses: number[] = [];
    // Each process counts for itself (docs/sync.md "Several central processes"): ten 401s at each of the three,
    // then every one refuses.
    for (let i = 0; i < 60; i++) {
      statuses.push(await enrolFrom(guesser, 'AAAA-AAAA-AAAA-AAAA'));
      if (statuses.length >= 6 && statuses.slice(-6).every((s) => s === 429)) break;
    }
    const refused = statuses.filter((s) => s === 401).length;
    expect(refused).toBeGreaterThanOrEqual(10);
    expect(refused).toBeLessThanOrEqual(30);
    expect(statuses.slice(-6)).toEqual(Array(6).fill(429));
    // Naming another address does not help: the balancer adds the real one, and the right-most untrusted counts.
    expect(await enrolFrom(guesser, 'AAAA-AAAA-AAAA-AAAA', { 'x-forwarded-for': '127.0.0.3' })).toBe(429);
    // Another client, at another address, enrols.
    expect(await enrolFrom('127.0.0.3', await enrolCode())).toBe(201);
  });
});
