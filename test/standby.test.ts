import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { DEMO, requestToken, startTestBox, type TestBox, UNLIMITED_CUSTOMER } from './support/box.js';
import { runCliAsync } from './support/cli.js';
import { newOrder } from './support/orders.js';
import { openSocket } from './support/socket.js';
import { type Pair, standbyStatus, startPair, waitForStatus } from './support/standby.js';
import { SYSTEM_PACKAGES, skipWithout } from './support/system-packages.js';

// Two real boxes on loopback, the standby following the primary over its stream (docs/operations.md "A standby
// box"). The takeover here is `venue-box standby promote`, as keepalived's notify_master runs it; the floating
// address itself is in test/standby-netns.test.ts.

/** Products of the demo menu sold for TAKE_AWAY at the open venue. */
const products = ['zurek', 'rosol', 'barszcz', 'woda'];
const boxes: TestBox[] = [];
afterEach(async () => {
  for (const b of boxes.splice(0)) await b.stop('SIGKILL');
});
/** Customers as fast as the box answers, each with as many open orders as the load makes. */
const CONFIG = { ordering: { ...UNLIMITED_CUSTOMER.ordering, maxOpenPerAnonymousUser: 10_000 } };
async function pair(): Promise<Pair> {
  const p = await startPair({ config: CONFIG });
  boxes.push(p.primary, p.standby);
  return p;
}

/** Orders a customer places one after another until `stop`; every confirmed order id in `confirmed`. */
async function placeOrders(
  box: TestBox,
  token: string,
  confirmed: string[],
  stop: { done: boolean },
  max = 2000,
): Promise<void> {
  let i = 0;
  while (!stop.done && i < max) {
    i++;
    const line = { productId: products[i % products.length]!, quantity: 1 + (i % 3) };
    try {
      const res = await box.post('/ordering-api/api/order/new', token, newOrder(DEMO.openVenue, [line]));
      if (res.status === 200) confirmed.push(((await res.json()) as { orderId: string }).orderId);
      else await res.body?.cancel();
    } catch {
      // the primary died under this request: unconfirmed
      return;
    }
  }
}

async function promote(box: TestBox): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCliAsync(['standby', 'promote', '--port', String(box.port), '--data-dir', box.dataDir], 20_000);
}

describe('pairing', () => {
  test('a wrong code is refused and costs a try; the right one pairs; the standby copies the primary', async () => {
    const p = await pair();
    expect(await standbyStatus(p.standby)).toMatchObject({ role: 'standby', state: 'following', term: 0 });
    const wrong = await runCliAsync([
      'standby',
      'join',
      `http://127.0.0.1:${p.primary.port}`,
      '--code',
      'AAAAA-BBBBB',
      '--self',
      'http://127.0.0.1:1',
      '--data-dir',
      `${p.standby.dataDir}-other`,
    ]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^venue-box standby: the primary refused: no pairing code is open/);
    // The standby's readiness says it takes no orders; its port answers nothing else.
    const ready = await p.standby.get('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ codes: [{ code: 'unavailable', args: ['standby'] }] });
  });
});

describe('takeover', () => {
  test('kill -9 of the primary under load: every confirmed order, token and event is on the new primary', async () => {
    const p = await pair();
    const staff = await p.primary.token(DEMO.staff.username, DEMO.staff.password);
    const customers = await Promise.all([0, 1, 2, 3].map(() => p.primary.token()));
    const socket = await openSocket(p.primary.wsUrl('/ordering-api/ws'), customers[0]!.access_token);
    await socket.next('HELLO');
    const confirmed: string[][] = customers.map(() => []);
    const stop = { done: false };
    const load = customers.map((c, i) => placeOrders(p.primary, c.access_token, confirmed[i]!, stop));
    await sleep(1500);
    expect((await standbyStatus(p.primary)).state).toBe('synchronous');
    p.primary.proc.kill('SIGKILL');
    await Promise.all(load);
    stop.done = true;
    const all = confirmed.flat();
    expect(all.length).toBeGreaterThan(20);

    const killedAt = Date.now();
    const promoted = await promote(p.standby);
    expect(promoted.code, promoted.stderr).toBe(0);
    expect(promoted.stdout).toMatch(/this box is the primary \(term 1\)/);
    // The same port, now the box itself: its first ready answer.
    for (let i = 0; i < 200 && (await p.standby.get('/readyz').catch(() => undefined))?.status !== 200; i++)
      await sleep(50);
    expect((await p.standby.get('/readyz')).status).toBe(200);
    const tookMs = Date.now() - killedAt;
    expect(tookMs).toBeLessThan(10_000);

    // A token the dead box issued works here, refresh included.
    for (const [i, c] of customers.entries()) {
      for (const id of confirmed[i]!) {
        const res = await p.standby.get(`/ordering-api/api/order/${id}`, c.access_token);
        expect(res.status, `order ${id}`).toBe(200);
      }
    }
    const refreshed = await fetch(p.standby.url('/auth-oauth2/oauth/token'), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-tenant': DEMO.tenant,
        authorization: `Basic ${Buffer.from(`${DEMO.client.clientId}:${DEMO.client.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: staff.refresh_token }).toString(),
    });
    expect(refreshed.status).toBe(200);
    // The socket reconnects with its last seq and gets each event after it once.
    const last = socket.frames.at(-1)!.seq;
    const again = await openSocket(p.standby.wsUrl(`/ordering-api/ws?since=${last}`), customers[0]!.access_token);
    const hello = await again.next('HELLO');
    expect(hello.seq).toBeGreaterThanOrEqual(last);
    await sleep(300);
    const seqs = again.frames.filter((f) => f.type !== 'HELLO').map((f) => f.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    again.close();
    const status = await standbyStatus(p.standby);
    expect(status).toMatchObject({ role: 'primary', term: 1, state: 'alone' });
    expect(status.lastTakeoverAt).not.toBeNull();
    // The copy is a consistent database: the ledger check passes.
    const check = await runCliAsync(['stock', 'check', '--data-dir', p.standby.dataDir]);
    expect(check.code, check.stdout + check.stderr).toBe(0);
  });

  test('the standby refuses to take over while the primary speaks', async () => {
    const p = await pair();
    const promoted = await promote(p.standby);
    expect(promoted.code).toBe(1);
    expect(promoted.stderr).toMatch(/not promoted: the primary spoke \d+ ms ago: it is alive/);
    expect(await standbyStatus(p.standby)).toMatchObject({ role: 'standby', state: 'following' });
  });
});

describe('a standby that goes away', () => {
  test('the primary stalls at most standby.stallMs, goes on alone, and the standby catches up when back', async () => {
    const p = await pair();
    const c = await p.primary.token();
    p.standby.proc.kill('SIGSTOP');
    try {
      const started = Date.now();
      const res = await p.primary.post('/ordering-api/api/order/new', c.access_token, newOrder(DEMO.openVenue));
      expect(res.status).toBe(200);
      const stalled = Date.now() - started;
      expect(stalled).toBeLessThan(2000);
      expect(await standbyStatus(p.primary)).toMatchObject({ state: 'catchingUp', stalls: 1 });
      // Alone now: no wait.
      const t = Date.now();
      expect(
        (await p.primary.post('/ordering-api/api/order/new', c.access_token, newOrder(DEMO.openVenue))).status,
      ).toBe(200);
      expect(Date.now() - t).toBeLessThan(500);
    } finally {
      p.standby.proc.kill('SIGCONT');
    }
    await waitForStatus(p.primary, (s) => s.state === 'synchronous');
  });

  test('a standby stopped cleanly resumes where it was; one killed (-9) copies the primary again', async () => {
    const p = await pair();
    const c = await p.primary.token();
    const orders = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        const res = await p.primary.post('/ordering-api/api/order/new', c.access_token, newOrder(DEMO.openVenue));
        expect(res.status).toBe(200);
      }
    };
    const again = async (): Promise<TestBox> => {
      const s = await startTestBox({ dataDir: p.standby.dataDir, port: p.standbyPort, demo: false, config: CONFIG });
      boxes.push(s);
      await waitForStatus(p.primary, (st) => st.state === 'synchronous');
      return s;
    };
    await p.standby.stop('SIGTERM');
    await orders(20);
    await waitForStatus(p.primary, (s) => s.state === 'alone');
    const resumed = await again();
    expect(resumed.logs.some((l) => l.includes('"mode":"resume"'))).toBe(true);
    // Killed, its position may lag what it appended: it is not trusted, and the copy is made again.
    await resumed.stop('SIGKILL');
    await orders(20);
    const copied = await again();
    expect(copied.logs.some((l) => l.includes('"mode":"snapshot"'))).toBe(true);
  });
});

describe('the copy', () => {
  test('through bursts and the WAL restarts between them, the standby holds exactly the primary database', async () => {
    const p = await pair();
    const c = await p.primary.token();
    const walSalt = (): number => readFileSync(`${p.primary.dataDir}/venue-box.db-wal`).readUInt32BE(16);
    const salts = new Set([walSalt()]);
    for (let burst = 0; burst < 5; burst++) {
      const confirmed: string[] = [];
      await placeOrders(p.primary, c.access_token, confirmed, { done: false }, 40);
      expect(confirmed).toHaveLength(40);
      // Idle: the checkpointer copies the WAL back and the WAL restarts once the standby holds every frame.
      await sleep(900);
      salts.add(walSalt());
    }
    expect(salts.size).toBeGreaterThan(2);
    await waitForStatus(p.primary, (s) => s.state === 'synchronous' && s.lagBytes === 0);
    await p.standby.stop('SIGTERM');
    const dump = (file: string): unknown => {
      const db = new Database(file, { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        return {
          orders: db.prepare('SELECT * FROM orders ORDER BY id').all(),
          commands: db.prepare('SELECT * FROM order_commands ORDER BY seq').all(),
          outbox: db.prepare('SELECT * FROM sync_outbox ORDER BY seq').all(),
        };
      } finally {
        db.close();
      }
    };
    expect(dump(`${p.standby.dataDir}/venue-box.db`)).toEqual(dump(`${p.primary.dataDir}/venue-box.db`));
  });
});

describe('never two primaries', () => {
  test('the old primary, back after the takeover, is fenced: it exits 75 and starts again as the standby', async () => {
    const p = await pair();
    const c = await p.primary.token();
    const before = await p.primary.post('/ordering-api/api/order/new', c.access_token, newOrder(DEMO.openVenue));
    expect(before.status).toBe(200);
    p.primary.proc.kill('SIGKILL');
    expect((await promote(p.standby)).code).toBe(0);
    // Started again as it was (systemd would): it asks its peer before its port opens, and stops.
    const again = await startTestBox({ dataDir: p.primary.dataDir, port: p.primaryPort, config: CONFIG }).then(
      () => 'served',
      (err: Error) => err.message,
    );
    expect(again).toMatch(/box exited with 75/);
    expect(again).toMatch(/fenced: the peer box is the primary at term 1/);
    // Its next start follows the new primary, which is in step with it again.
    const old = await startTestBox({ dataDir: p.primary.dataDir, port: p.primaryPort, config: CONFIG });
    boxes.push(old);
    expect(await standbyStatus(old)).toMatchObject({ role: 'standby', term: 1 });
    // What it held as the primary is kept beside the copy it now follows, never thrown away.
    expect(readdirSync(p.primary.dataDir).filter((f) => f.startsWith('diverged-'))).toHaveLength(1);
    await waitForStatus(p.standby, (s) => s.state === 'synchronous');
    expect(
      (
        await p.standby.get(
          `/ordering-api/api/order/${((await before.json()) as { orderId: string }).orderId}`,
          c.access_token,
        )
      ).status,
    ).toBe(200);
  });
});

describe.skipIf(skipWithout(import.meta.url, 'faketime'))('clocks that differ by hours', () => {
  test('a standby five hours ahead pairs, follows and takes over; tokens are refreshed on its clock', async () => {
    const fake = { LD_PRELOAD: SYSTEM_PACKAGES.faketime, FAKETIME: '+5h', FAKETIME_DONT_RESET: '1' };
    const p = await startPair({ config: CONFIG, standbyEnv: fake });
    boxes.push(p.primary, p.standby);
    const staff = await p.primary.token(DEMO.staff.username, DEMO.staff.password);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await p.primary.post('/ordering-api/api/order/new', staff.access_token, newOrder(DEMO.openVenue));
      ids.push(((await res.json()) as { orderId: string }).orderId);
    }
    p.primary.proc.kill('SIGKILL');
    expect((await promote(p.standby)).code).toBe(0);
    for (let i = 0; i < 200 && (await p.standby.get('/readyz').catch(() => undefined))?.status !== 200; i++)
      await sleep(50);
    // Nothing of the replication looked at a clock; the token, an hour long on the primary's clock, is five hours
    // old on this one, and its refresh token gets a new one, as after any expiry.
    expect((await p.standby.get(`/ordering-api/api/order/${ids[0]}`, staff.access_token)).status).toBe(401);
    const refreshed = await requestToken(p.standby, {
      grant_type: 'refresh_token',
      refresh_token: staff.refresh_token,
    });
    expect(refreshed.status).toBe(200);
    const fresh = ((await refreshed.json()) as { access_token: string }).access_token;
    for (const id of ids) expect((await p.standby.get(`/ordering-api/api/order/${id}`, fresh)).status).toBe(200);
  });
});

describe('bad input on the standby routes', () => {
  test('a malformed join, a missing nonce, promote from another address, a stranger on the stream', async () => {
    const box = await startTestBox({ config: CONFIG });
    boxes.push(box);
    const join = await box.post('/standby-api/join', undefined, { code: 'X', boxId: 'not-a-uuid' });
    expect(join.status).toBe(400);
    expect(((await join.json()) as { codes: unknown[] }).codes).toContainEqual(
      expect.objectContaining({ code: 'invalidField', args: ['/boxId'] }),
    );
    const state = await box.get('/standby-api/state');
    expect(state.status).toBe(400);
    expect(await state.json()).toMatchObject({ codes: [{ code: 'invalidField', args: ['nonce'] }] });
    // 127.0.0.2 reaches the box on loopback, but is not this machine's own address.
    const promoted = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(box.url('/standby-api/promote'), { method: 'POST', localAddress: '127.0.0.2' }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(promoted.status).toBe(403);
    expect(JSON.parse(promoted.body)).toMatchObject({ codes: [{ code: 'forbidden' }] });
    // No standby is paired: nobody gets past the stream's upgrade.
    const stranger = await openSocket(box.wsUrl('/standby-api/stream'), undefined, {
      'x-box-id': '6f1c2b9e-8a1d-4c57-9a55-1b3f9e0c2d41',
    }).then(
      () => 'open',
      (err: { status?: number }) => err.status,
    );
    expect(stranger).toBe(403);
  });
});
