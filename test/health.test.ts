import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { DEMO, requestToken, startTestBox, type TestBox, UNLIMITED_CUSTOMER } from './support/box.js';
import { contractsOf } from './support/contracts.js';
import { command, newOrder } from './support/orders.js';
import { parseMetrics, seriesValue, sampleValue } from './support/prometheus.js';
import { openSocket, type TestSocket } from './support/socket.js';

const boxes: TestBox[] = [];
const sockets: TestSocket[] = [];
afterAll(async () => {
  for (const s of sockets) s.close();
  for (const box of boxes) await box.stop();
});

async function start(config: Record<string, unknown> = {}, dataDir?: string): Promise<TestBox> {
  const box = await startTestBox({ config: { ...UNLIMITED_CUSTOMER, ...config }, dataDir });
  boxes.push(box);
  return box;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const codesOf = async (res: Response) => ((await res.json()) as { codes: { code: string; args: string[] }[] }).codes;
const staffToken = async (box: TestBox) => (await box.token(DEMO.staff.username, DEMO.staff.password)).access_token;
const scrape = async (box: TestBox, token: string) => {
  const res = await box.get('/metrics', token);
  expect(res.status).toBe(200);
  return res.text();
};

describe('GET /metrics', () => {
  test('after orders through the API and the socket: every family, its type, and values that moved', async () => {
    const box = await start();
    const staff = await staffToken(box);
    const guest = await box.token();
    const ws = await openSocket(box.wsUrl('/ordering-api/ws'), guest.access_token);
    sockets.push(ws);
    await ws.next('HELLO');
    const venueSocket = await openSocket(box.wsUrl(`/ordering-api/ws?venue=${DEMO.openVenue}`), staff);
    sockets.push(venueSocket);
    await venueSocket.next('HELLO');

    const before = parseMetrics(await scrape(box, staff));
    expect(sampleValue(before, 'venue_box_commands_confirmed_total', { kind: 'new' })).toBe(0);

    const line = [{ productId: 'woda', quantity: 1 }];
    const orders = [];
    for (let i = 0; i < 3; i++) {
      const order = await command(box, guest.access_token, 'new', newOrder(DEMO.openVenue, line));
      await command(box, guest.access_token, `${order.orderId}/append`, { venue: DEMO.openVenue, lines: line });
      orders.push(order);
    }
    await command(box, staff, `${orders[0]!.orderId}/cancel`, {});
    // An append to an unknown product is confirmed, then rejected with a NOTIFICATION.
    await command(box, guest.access_token, `${orders[1]!.orderId}/append`, {
      venue: DEMO.openVenue,
      lines: [{ productId: 'no-such-product', quantity: 1 }],
    });
    for (let i = 0; i < 7; i++) await ws.next('ORDER_CHANGE');
    await ws.next('NOTIFICATION');
    await sleep(1100); // a WAL checkpoint or more

    const res = await box.get('/metrics', staff);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    const f = parseMetrics(text);
    const typeOf = (name: string) => f.get(name)?.type;
    expect({
      confirmed: typeOf('venue_box_commands_confirmed_total'),
      processed: typeOf('venue_box_commands_processed_total'),
      latency: typeOf('venue_box_command_push_latency_seconds'),
      depth: typeOf('venue_box_command_queue_depth'),
      commit: typeOf('venue_box_queue_commit_duration_seconds'),
      transaction: typeOf('venue_box_queue_transaction_duration_seconds'),
      checkpoint: typeOf('venue_box_wal_checkpoint_duration_seconds'),
      loop: typeOf('venue_box_event_loop_delay_max_seconds'),
      sockets: typeOf('venue_box_sockets_open'),
      printQueue: typeOf('venue_box_print_queue_depth'),
      printer: typeOf('venue_box_printer_status'),
      backlog: typeOf('venue_box_sync_backlog_events'),
      lag: typeOf('venue_box_sync_oldest_unsynced_age_seconds'),
      free: typeOf('venue_box_disk_free_bytes'),
      low: typeOf('venue_box_disk_low'),
      full: typeOf('venue_box_disk_full'),
      rss: typeOf('process_resident_memory_bytes'),
      nodeLoop: typeOf('nodejs_eventloop_lag_p99_seconds'),
    }).toEqual({
      confirmed: 'COUNTER',
      processed: 'COUNTER',
      latency: 'HISTOGRAM',
      depth: 'GAUGE',
      commit: 'HISTOGRAM',
      transaction: 'HISTOGRAM',
      checkpoint: 'HISTOGRAM',
      loop: 'GAUGE',
      sockets: 'GAUGE',
      printQueue: 'GAUGE',
      printer: 'GAUGE',
      backlog: 'GAUGE',
      lag: 'GAUGE',
      free: 'GAUGE',
      low: 'GAUGE',
      full: 'GAUGE',
      rss: 'GAUGE',
      nodeLoop: 'GAUGE',
    });

    const kind = (name: string, k: string, outcome?: string) =>
      sampleValue(f, name, { kind: k, ...(outcome ? { outcome } : {}) });
    expect(
      [3, 4, 1].map((n, i) => [n, kind('venue_box_commands_confirmed_total', ['new', 'append', 'cancel'][i]!)]),
    ).toEqual([
      [3, 3],
      [4, 4],
      [1, 1],
    ]);
    expect(kind('venue_box_commands_processed_total', 'new', 'applied')).toBe(3);
    expect(kind('venue_box_commands_processed_total', 'append', 'applied')).toBe(3);
    expect(kind('venue_box_commands_processed_total', 'append', 'rejected')).toBe(1);
    expect(kind('venue_box_commands_processed_total', 'cancel', 'applied')).toBe(1);
    expect(kind('venue_box_commands_processed_total', 'submit', 'applied')).toBe(0);
    const latency = f.get('venue_box_command_push_latency_seconds')!.metrics[0]!;
    expect(Number(latency.count)).toBe(8);
    expect(Number(latency.sum)).toBeGreaterThan(0);
    expect(Number(latency.buckets!['+Inf'])).toBe(8);
    // One group commit per confirmation at this pace, one processing batch per command.
    expect(seriesValue(text, 'venue_box_queue_commit_duration_seconds_count{phase="confirm"}')).toBeGreaterThanOrEqual(
      1,
    );
    expect(seriesValue(text, 'venue_box_queue_commit_duration_seconds_count{phase="process"}')).toBeGreaterThanOrEqual(
      1,
    );
    expect(seriesValue(text, 'venue_box_queue_commit_duration_seconds_sum{phase="confirm"}')).toBeGreaterThan(0);
    expect(Number(f.get('venue_box_wal_checkpoint_duration_seconds')!.metrics[0]!.count)).toBeGreaterThanOrEqual(1);
    // The WAL's fsyncs: at least one for the tokens and one for each command at this pace (one at a time).
    expect(Number(f.get('venue_box_wal_fsync_duration_seconds')!.metrics[0]!.count)).toBeGreaterThanOrEqual(8);
    expect(Number(f.get('venue_box_wal_checkpoint_failures_total')!.metrics[0]!.value)).toBe(0);
    expect(sampleValue(f, 'venue_box_command_queue_depth')).toBe(0);
    expect(sampleValue(f, 'venue_box_sockets_open')).toBe(2);
    expect(sampleValue(f, 'venue_box_disk_free_bytes')).toBeGreaterThan(0);
    expect([sampleValue(f, 'venue_box_disk_full'), sampleValue(f, 'venue_box_disk_min_free_bytes')]).toEqual([
      0, 67_108_864,
    ]);
    // Not enrolled: every order waits in the outbox.
    expect(sampleValue(f, 'venue_box_sync_enrolled')).toBe(0);
    expect(sampleValue(f, 'venue_box_sync_backlog_events')).toBeGreaterThanOrEqual(3);
    expect(sampleValue(f, 'process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
    expect(sampleValue(f, 'venue_box_build_info')).toBe(1);

    // Sockets closed are sockets no longer open.
    ws.close();
    await ws.closed;
    await sleep(50);
    expect(sampleValue(parseMetrics(await scrape(box, staff)), 'venue_box_sockets_open')).toBe(1);
  });

  test('a box never paired reports role single, not synchronous, 0 lag and no takeover', async () => {
    const box = await start();
    const f = parseMetrics(await scrape(box, await staffToken(box)));
    expect(f.get('venue_box_standby_role')!.metrics.map((m) => [m.labels?.role, Number(m.value)])).toEqual([
      ['single', 1],
    ]);
    const standby = (n: string) => sampleValue(f, `venue_box_standby_${n}`);
    expect(
      ['term', 'connected', 'synchronous', 'lag_bytes', 'lag_seconds', 'stalls', 'last_takeover_timestamp_seconds'].map(
        (n) => [n, standby(n)],
      ),
    ).toEqual([
      ['term', 0],
      ['connected', 0],
      ['synchronous', 0],
      ['lag_bytes', 0],
      ['lag_seconds', 0],
      ['stalls', 0],
      ['last_takeover_timestamp_seconds', 0],
    ]);
  });

  test('a staff token by default: no token 401, anonymous and read-only tokens 403, staff 200', async () => {
    const box = await start();
    const none = await box.get('/metrics');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="venue-box"');
    expect((await codesOf(none)).map((c) => c.code)).toEqual(['unauthorized']);
    const forged = await box.get('/metrics', 'not.a.token');
    expect(forged.status).toBe(401);

    const anonymous = await box.get('/metrics', (await box.token()).access_token);
    expect(anonymous.status).toBe(403);
    expect((await codesOf(anonymous)).map((c) => c.code)).toEqual(['forbidden']);
    const readOnly = await requestToken(box, {
      grant_type: 'password',
      username: DEMO.staff.username,
      password: DEMO.staff.password,
      scope: 'read',
    });
    const readOnlyToken = ((await readOnly.json()) as { access_token: string }).access_token;
    expect((await box.get('/metrics', readOnlyToken)).status).toBe(403);

    expect((await box.get('/metrics', await staffToken(box))).status).toBe(200);
  });

  test('metrics.allowAddresses lets a scraper in without a token; other addresses still need one', async () => {
    const open = await start({ metrics: { allowAddresses: ['10.9.9.9', '127.0.0.0/8'] } });
    const res = await open.get('/metrics');
    expect(res.status).toBe(200);
    expect(parseMetrics(await res.text()).get('venue_box_sockets_open')?.type).toBe('GAUGE');
    // A token that does not verify does not matter from an allowed address.
    expect((await open.get('/metrics', 'not.a.token')).status).toBe(200);

    const elsewhere = await start({ metrics: { allowAddresses: ['10.9.9.9'] } });
    expect((await elsewhere.get('/metrics')).status).toBe(401);
  });

  test('metrics.enabled false: /metrics is not served; a bad allowAddresses entry stops the box at start', async () => {
    const off = await start({ metrics: { enabled: false } });
    const res = await off.get('/metrics', await staffToken(off));
    expect(res.status).toBe(404);
    expect((await codesOf(res)).map((c) => c.code)).toEqual(['notFound']);
    expect((await off.get('/healthz')).status).toBe(200);

    await expect(startTestBox({ config: { metrics: { allowAddresses: ['localhost'] } } })).rejects.toThrow(
      /\/metrics\/allowAddresses\/0: not an IP address or CIDR range: localhost/,
    );
  });
});

describe('GET /healthz and /readyz', () => {
  test('without a token: 200 while serving; while stopping /readyz is 503 "stopping" and /healthz stays 200', async () => {
    const box = await start();
    const healthz = await box.get('/healthz');
    expect([healthz.status, await healthz.json()]).toEqual([200, { status: 'ok' }]);
    const readyz = await box.get('/readyz');
    // A box never paired: its orders are on it alone (docs/operations.md "A standby box"), as its contract says.
    const single = { role: 'single', state: 'alone', peer: null, lagBytes: 0, lagSeconds: 0, lastTakeoverAt: null };
    expect([readyz.status, await readyz.json()]).toEqual([200, { status: 'ready', standby: single }]);
    (await contractsOf(box)).response('get', '/readyz', 200, { status: 'ready', standby: single });

    // Stopping closes the listening socket at once; a connection already open is still answered until the end.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: box.port, path, agent }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => {
            body += c.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        req.end();
      });
    expect((await get('/readyz')).status).toBe(200);
    void box.stop();
    const answers: { path: string; status: number; body: string }[] = [];
    try {
      for (let i = 0; i < 2000; i++) {
        for (const path of ['/readyz', '/healthz']) answers.push({ path, ...(await get(path)) });
      }
    } catch {
      // The box closed the connection on its way out.
    }
    agent.destroy();
    const notReady = answers.filter((a) => a.path === '/readyz' && a.status === 503);
    expect(notReady.length).toBeGreaterThan(0);
    expect(JSON.parse(notReady[0]!.body)).toEqual({
      message: 'venue-box is shutting down',
      codes: [{ code: 'unavailable', message: 'venue-box is shutting down', args: ['stopping'] }],
    });
    // Never ready again once it said it was stopping, and never "down" while up.
    const firstNotReady = answers.indexOf(notReady[0]!);
    expect(
      answers
        .slice(firstNotReady)
        .filter((a) => a.path === '/readyz')
        .every((a) => a.status === 503),
    ).toBe(true);
    expect(answers.filter((a) => a.path === '/healthz').every((a) => a.status === 200)).toBe(true);
  });
});

// A small disk of its own (as in test/full-disk.test.ts): a 40 MiB tmpfs, which only root may mount.
function mountSmallDisk(): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'vb-health-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=40m', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    console.warn('test/health.test.ts: the full-disk case is skipped: `mount -t tmpfs` failed (it needs root)');
    return undefined;
  }
}

describe('a data disk below storage.minFreeBytes', () => {
  const disk = mountSmallDisk();
  afterAll(async () => {
    if (!disk) return;
    for (const box of boxes.splice(0)) await box.stop();
    execFileSync('umount', [disk]);
    rmSync(disk, { recursive: true, force: true });
  });

  test.skipIf(!disk)(
    '/readyz is 503 storageFull and the metrics say low and full; both recover when space returns',
    async () => {
      const MiB = 1024 * 1024;
      const dataDir = join(disk!, 'box');
      mkdirSync(dataDir);
      const box = await start(
        { storage: { minFreeBytes: 8 * MiB, warnFreeBytes: 16 * MiB }, metrics: { allowAddresses: ['127.0.0.1'] } },
        dataDir,
      );
      expect((await box.get('/readyz')).status).toBe(200);

      const filler = join(disk!, 'filler');
      const fd = openSync(filler, 'w');
      const s = statfsSync(disk!);
      try {
        writeSync(fd, Buffer.alloc(Math.max(0, s.bavail * s.bsize - 4 * MiB), 1));
      } finally {
        closeSync(fd);
      }
      await sleep(1100); // the guard trusts one look at the disk for a second
      const refused = await box.get('/readyz');
      expect(refused.status).toBe(503);
      expect(await codesOf(refused)).toEqual([
        {
          code: 'storageFull',
          message: 'the data disk is below storage.minFreeBytes: writes are refused',
          args: ['storageFull'],
        },
      ]);
      const f = parseMetrics(await (await box.get('/metrics')).text());
      expect([sampleValue(f, 'venue_box_disk_low'), sampleValue(f, 'venue_box_disk_full')]).toEqual([1, 1]);
      expect(sampleValue(f, 'venue_box_disk_free_bytes')).toBeGreaterThan(0);
      expect(sampleValue(f, 'venue_box_disk_free_bytes')).toBeLessThan(8 * MiB);
      expect((await box.get('/healthz')).status).toBe(200);

      rmSync(filler);
      await sleep(1100);
      expect((await box.get('/readyz')).status).toBe(200);
      const after = parseMetrics(await (await box.get('/metrics')).text());
      expect([sampleValue(after, 'venue_box_disk_low'), sampleValue(after, 'venue_box_disk_full')]).toEqual([0, 0]);
    },
  );
});
