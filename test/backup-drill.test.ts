import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import nacl from 'tweetnacl';
import { afterEach, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { runCli } from './support/cli.js';
import { startFakePrinter } from './support/fake-printer.js';
import { command, newOrder } from './support/orders.js';
import { FAST_PRINTING, jobsOf, VENUE } from './support/printing.js';
import { openSocket } from './support/socket.js';
import { startTestCentral } from './support/central.js';
import { drained, enrol, FAST_SYNC, hqOrders, syncStatus, waitFor } from './support/sync.js';
import { call, staff, W1, wpath } from './warehouse-client.js';
import { skipWithout } from './support/system-packages.js';

// A receipt printer on a serial line is a socat pseudo-terminal pair (test/support/fake-printer.ts).
const skip = skipWithout(import.meta.url, 'socat');

// The restore drill (docs/operations.md "Backups and restore"): a box serving orders, documents and print jobs; a backup
// taken while it runs; more orders; kill -9; restore into a new data directory; the box there holds exactly
// what the backup held, and nothing after it.
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const cli = (...args: string[]) => runCli(args);

/** Ids of the rows of `table` in a database file (read-only). */
function idsIn(file: string, table: string, column = 'id'): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT ${column} FROM ${table} ORDER BY ${column}`).pluck().all() as string[];
  } finally {
    db.close();
  }
}

test.skipIf(skip)(
  "restore drill: backup while serving, more orders, kill -9, restore into a new data dir: the backup's state exactly",
  async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'vb-drill-'));
    const stick = join(tmp, 'stick');
    spawnSync('mkdir', [stick]);
    const kitchen = await startFakePrinter(tmp, 'kitchen');
    cleanup.push(() => kitchen.stop());
    const config = {
      printers: [{ name: 'kitchen', venue: VENUE, role: 'kitchen', path: kitchen.boxPath }],
      printing: FAST_PRINTING,
      backup: { dir: stick },
    };
    const configFile = join(tmp, 'venue-box.json');
    writeFileSync(configFile, JSON.stringify(config));
    const first = await startTestBox({ config });
    cleanup.push(() => first.stop());
    // An enrolled box's identity (no central is needed for this drill: the sender only retries).
    const pair = nacl.sign.keyPair();
    const device = {
      central: 'http://127.0.0.1:9',
      deviceId: 'drill-device',
      tenant: DEMO.tenant,
      venue: VENUE,
      keyId: 'k1',
      secretKey: Buffer.from(pair.secretKey).toString('base64'),
    };
    writeFileSync(join(first.dataDir, 'sync-device.json'), JSON.stringify(device), { mode: 0o600 });

    // Before the backup: two orders (one submitted: a kitchen ticket printed, a claim slip with no counter printer),
    // seen on the customer's socket; a PZ.
    const customer = await first.token();
    const kelner = await staff(first);
    const ws = await openSocket(first.wsUrl('/ordering-api/ws'), customer.access_token);
    await ws.next('HELLO');
    const o1 = await command(
      first,
      customer.access_token,
      'new',
      newOrder(VENUE, [{ productId: 'zurek', quantity: 2 }]),
    );
    await ws.next('ORDER_CHANGE');
    await command(first, customer.access_token, `${o1.orderId}/submit`, {});
    await kitchen.waitForTicketWith('Żurek');
    const o2 = await command(
      first,
      customer.access_token,
      'new',
      newOrder(VENUE, [{ productId: 'rosol', quantity: 1 }]),
    );
    await ws.next('ORDER_CHANGE');
    const pzBefore = { number: 'PZ-DRILL-1', items: [{ id: 'mleko', unit: 'l', qty: 12.5 }] };
    expect((await call(first, kelner, 'POST', wpath(W1, '/documents/pz'), pzBefore)).status).toBe(201);
    await expect
      .poll(async () => (await jobsOf(first, kelner.token)).map((j) => j.state).sort())
      .toEqual(['printed', 'unrouted']);
    const stockOf = async (box: TestBox) =>
      (await call(box, kelner, 'POST', wpath(W1, '/stock'), { items: ['mleko'] })).body.items[0];
    const orderOf = async (box: TestBox, id: string) => {
      const res = await box.get(`/ordering-api/api/order/${id}`, customer.access_token);
      return { status: res.status, body: res.status === 200 ? await res.json() : undefined };
    };
    const atBackup = {
      o1: await orderOf(first, o1.orderId),
      o2: await orderOf(first, o2.orderId),
      jobs: await jobsOf(first, kelner.token),
      stock: await stockOf(first),
    };

    // The backup, while the box runs.
    const drillStart = performance.now();
    const backup = cli('backup', 'now', '--data-dir', first.dataDir, '--config', configFile);
    expect(backup.status, backup.stderr).toBe(0);
    const file = backup.stdout.trim().split('\n').at(-1)!;
    expect(file.startsWith(`${stick}/venue-box-`)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const backupMs = performance.now() - drillStart;

    // After it: a third order, a line more on the second, another PZ; then the box dies.
    const o3 = await command(
      first,
      customer.access_token,
      'new',
      newOrder(VENUE, [{ productId: 'barszcz', quantity: 1 }]),
    );
    await command(first, customer.access_token, `${o3.orderId}/submit`, {});
    await command(first, customer.access_token, `${o2.orderId}/append`, {
      venue: VENUE,
      lines: [{ productId: 'woda', quantity: 3 }],
    });
    const pzAfter = { number: 'PZ-DRILL-2', items: [{ id: 'mleko', unit: 'l', qty: 7 }] };
    expect((await call(first, kelner, 'POST', wpath(W1, '/documents/pz'), pzAfter)).status).toBe(201);
    await expect.poll(async () => (await jobsOf(first, kelner.token)).length).toBe(4);
    ws.close();
    expect(await first.stop('SIGKILL')).toBeNull();

    // Restore into a data directory that does not exist yet, and start a box there.
    const restoreStart = performance.now();
    const dataDir = join(tmp, 'new-card', 'data');
    const restored = cli('restore', file, '--data-dir', dataDir);
    expect(restored.status, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`into ${dataDir}`);
    const second = await startTestBox({ dataDir, config });
    cleanup.push(() => second.stop());
    const drillMs = backupMs + (performance.now() - restoreStart);

    // Tokens issued before the backup still verify (the signing key came with it); orders are as at the backup.
    expect(await orderOf(second, o1.orderId)).toEqual(atBackup.o1);
    expect(await orderOf(second, o2.orderId)).toEqual(atBackup.o2);
    expect((await orderOf(second, o3.orderId)).status).toBe(404);
    expect(await jobsOf(second, kelner.token)).toEqual(atBackup.jobs);
    expect(await stockOf(second)).toEqual(atBackup.stock);
    expect(atBackup.stock).toMatchObject({ qty: 12.5 });
    // The socket replays the orders' events from before the backup, none after.
    const replay = await openSocket(second.wsUrl('/ordering-api/ws?since=0'), customer.access_token);
    await replay.next('HELLO');
    const replayed = [
      await replay.next('ORDER_CHANGE'),
      await replay.next('ORDER_CHANGE'),
      await replay.next('ORDER_CHANGE'),
    ];
    expect(replayed.map((f) => f.payload.id)).toEqual([o1.orderId, o1.orderId, o2.orderId]);
    await new Promise((r) => setTimeout(r, 300));
    expect(replay.frames.filter((f) => f.type === 'ORDER_CHANGE')).toHaveLength(3);
    replay.close();
    // The database itself, table by table, against the backup file.
    const db = join(dataDir, 'venue-box.db');
    for (const [table, column] of [
      ['orders', 'id'],
      ['stock_documents', 'id'],
      ['print_jobs', 'id'],
      ['orders', 'lines_json'],
    ] as const) {
      expect(idsIn(db, table, column), table).toEqual(idsIn(file, table, column));
    }
    expect(idsIn(db, 'stock_documents', 'number')).toEqual(['PZ-DRILL-1']);
    expect(existsSync(join(dataDir, 'venue-box.db'))).toBe(true);
    // The sync identity came along, 0600: the restored box syncs as the same device.
    expect(JSON.parse(readFileSync(join(dataDir, 'sync-device.json'), 'utf8'))).toEqual(device);
    expect(statSync(join(dataDir, 'sync-device.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'jwt-ed25519.json')).mode & 0o777).toBe(0o600);
    // The later PZ is not there: posted again, it is created (201), where the earlier one is a retry (200).
    expect((await call(second, kelner, 'POST', wpath(W1, '/documents/pz'), pzBefore)).status).toBe(200);
    expect((await call(second, kelner, 'POST', wpath(W1, '/documents/pz'), pzAfter)).status).toBe(201);

    console.log(
      `restore drill: backup ${Math.round(backupMs)} ms, restore and start ${Math.round(drillMs - backupMs)} ms, ` +
        `${Math.round(drillMs)} ms in all (${(statSync(file).size / 1_048_576).toFixed(1)} MiB backup)`,
    );
    expect(drillMs).toBeLessThan(60_000);
  },
  90_000,
);

test.skipIf(skip)(
  'restore drill of an enrolled box: the same device; what the central took after the backup comes back',
  async () => {
    const central = await startTestCentral();
    cleanup.push(() => central.stop());
    const first = await startTestBox({ config: FAST_SYNC });
    cleanup.push(() => first.stop());
    await enrol(first, central.url(''), await central.enrolCode(DEMO.openVenue));
    const kelner = await staff(first);
    const order = async (box: TestBox, productId: string) =>
      (await command(box, kelner.token, 'new', newOrder(VENUE, [{ productId, quantity: 1 }]))).orderId;
    const before = [await order(first, 'zurek'), await order(first, 'rosol')];
    await drained(first);
    const backup = cli('backup', 'now', '--data-dir', first.dataDir);
    expect(backup.status, backup.stderr).toBe(0);
    const file = backup.stdout.trim().split('\n').at(-1)!;
    const after = [await order(first, 'barszcz')];
    expect(
      (
        await call(first, kelner, 'POST', wpath(W1, '/documents/pz'), {
          number: 'PZ-SYNCED',
          items: [{ id: 'maka', unit: 'kg', qty: 5 }],
        })
      ).status,
    ).toBe(201);
    const sent = await drained(first);
    const unsent = await order(first, 'woda'); // the box dies before sending it
    expect(await first.stop('SIGKILL')).toBeNull();

    const dataDir = join(mkdtempSync(join(tmpdir(), 'vb-drill-sync-')), 'data');
    expect(cli('restore', file, '--data-dir', dataDir).status).toBe(0);
    const second = await startTestBox({ dataDir, config: FAST_SYNC });
    cleanup.push(() => second.stop());
    const status = await waitFor(
      'the restored box to catch up with the central',
      async () => {
        const s = await syncStatus(second);
        return s.epoch > sent.epoch && s.backlog === 0 ? s : undefined;
      },
      60_000,
    );
    expect(status).toMatchObject({ deviceId: sent.deviceId, lastError: null, ackedSeq: sent.newestSeq });
    // Orders from before the backup, and the ones the central took after it, are on the box; the unsent one is lost.
    for (const id of [...before, ...after])
      expect((await second.get(`/ordering-api/api/order/${id}`, kelner.token)).status, id).toBe(200);
    expect((await second.get(`/ordering-api/api/order/${unsent}`, kelner.token)).status).toBe(404);
    expect((await call(second, kelner, 'POST', wpath(W1, '/stock'), { items: ['maka'] })).body.items[0]).toMatchObject({
      qty: 5,
    });
    // One device at the central, which goes on taking this box's events.
    expect((await central.hq('/hq-api/api/devices')).map((d: { id: string }) => d.id)).toEqual([sent.deviceId]);
    const fresh = await order(second, 'sernik');
    await drained(second);
    expect((await hqOrders(central, VENUE)).map((o: { id: string }) => o.id)).toEqual(
      expect.arrayContaining([...before, ...after, fresh]),
    );
  },
  150_000,
);
