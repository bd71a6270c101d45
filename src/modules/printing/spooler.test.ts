import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import demo from '../../../native-config/demo.json';
import { migrate } from '../../db/migrate.js';
import { type Db, openDatabase } from '../../db/open.js';
import { createLogger } from '../../log.js';
import { createProvisioningRepo } from '../provisioning/repo.js';
import { applyProvisioning } from '../provisioning/service.js';
import type { PrinterDevice } from './printer-worker.js';
import type { PrinterConfig } from './printers.js';
import { createPrintRepo, type PrintRepo } from './repo.js';
import type { JobTicket } from './schemas.js';
import { type PaperStatus, PrinterError } from './printer-status.js';
import { createPrintingService, type PrintingService } from './service.js';
import { createSpooler, type Spooler, type SpoolerOptions, type StatusChange } from './spooler.js';

const T = demo.tenants[0]!.id;
const V = demo.tenants[0]!.venues[0]!.id;

/** A printer in memory: its paper state, what it printed (as latin1 text), and a switch to hold writes. */
class FakeDevice implements PrinterDevice {
  paper: PaperStatus | 'offline' = 'ok';
  printed: string[] = [];
  hold: Promise<void> | undefined;
  closed = 0;
  async paperStatus(): Promise<PaperStatus> {
    if (this.paper === 'offline') throw new PrinterError('offline', 'no status answer');
    return this.paper;
  }
  async print(bytes: Uint8Array): Promise<void> {
    if (this.paper === 'offline') throw new PrinterError('missing', 'cannot open');
    await this.hold;
    this.printed.push(Buffer.from(bytes).toString('latin1'));
  }
  close(): void {
    this.closed++;
  }
}

const printerOf = (name: string, role: 'kitchen' | 'counter', extra: Partial<PrinterConfig> = {}): PrinterConfig => ({
  name,
  venue: V,
  role,
  path: `/dev/null-${name}`,
  baudRate: 19200,
  columns: 42,
  codePage: 'cp852',
  statusQuery: true,
  ...extra,
});
const OPTIONS: SpoolerOptions = {
  kitchenMaxAgeMinutes: 30,
  backupAfterSeconds: 3600,
  retryMinMs: 10,
  retryMaxMs: 40,
  statusTimeoutMs: 100,
  statusPollSeconds: 0.05,
};

let dir: string;
let db: Db;
let repo: PrintRepo;
let devices: Map<string, FakeDevice>;
let changes: StatusChange[];
let spooler: Spooler | undefined;
let printing: PrintingService;
let orderSeq = 0;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vb-spool-'));
  db = openDatabase(join(dir, 'venue-box.db'));
  db.pragma('synchronous = OFF');
  migrate(db);
  applyProvisioning(createProvisioningRepo(db), 'demo', demo);
  repo = createPrintRepo(db);
  devices = new Map();
  changes = [];
});
afterEach(async () => {
  await spooler?.stop(100);
  spooler = undefined;
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(
  printers: PrinterConfig[],
  options: Partial<SpoolerOptions> = {},
  synced?: () => Promise<void>,
): Spooler {
  spooler = createSpooler({
    repo,
    printers,
    options: { ...OPTIONS, ...options },
    log: createLogger(process.env.SPOOL_LOG ?? 'silent'),
    now: Date.now,
    onStatus: (c) => changes.push(c),
    idleTickMs: 10,
    sweepMs: 20,
    synced,
    openDevice: (p) => {
      const d = new FakeDevice();
      devices.set(p.name, d);
      return d;
    },
  });
  printing = createPrintingService({ repo, printers, spooler, now: Date.now });
  spooler.start();
  return spooler;
}

/** An order row (print jobs reference one) and its ticket of `kind` with one line named `name`. */
function enqueue(kind: JobTicket['kind'], name: string, createdMs = Date.now()): string[] {
  const orderId = `00000000-0000-4000-8000-${String(++orderSeq).padStart(12, '0')}`;
  db.prepare(`INSERT INTO orders (tenant_id, id, order_type, status, claim_code, total_minor, edit_total_minor, closed,
    completed, source, created_ms, changed_ms) VALUES (?, ?, 'TAKE_AWAY', 'ORDERED', ?, 1800, 0, 0, 0, 't', 1, 1)`).run(
    T,
    orderId,
    String(100000 + orderSeq),
  );
  const ticket: JobTicket = {
    kind,
    orderId,
    venueId: V,
    venueName: 'Pod Wawelem',
    orderType: 'TAKE_AWAY',
    claimCode: String(100000 + orderSeq),
    round: 1,
    timeZone: 'Europe/Warsaw',
    at: createdMs,
    localTime: '',
    total: '18.00',
    orderTotal: '18.00',
    lines: [{ text: `1 x ${name}`, quantity: 1, name, category: 'soups', price: '18.00', amount: '18.00' }],
  };
  const ids = repo.transaction(() => printing.enqueue(T, ticket, createdMs));
  spooler!.wake();
  return ids;
}

const stateOf = (id: string) => repo.get(T, id)!;
const until = (check: () => boolean, timeoutMs = 3000) =>
  expect.poll(check, { timeout: timeoutMs, interval: 5 }).toBe(true);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('spooler', () => {
  test('a job is printed only once an fsync begun after it was read is done (a power cut cannot take its order back)', async () => {
    let durable!: () => void;
    let asked = 0;
    start([printerOf('k', 'kitchen')], {}, () => {
      asked++;
      return new Promise<void>((r) => (durable = r));
    });
    const k = devices.get('k')!;
    const [job] = enqueue('kitchen', 'Alpha');
    await until(() => asked === 1);
    await sleep(30);
    expect(k.printed).toEqual([]);
    expect(stateOf(job!).state).toBe('queued');
    durable();
    await until(() => stateOf(job!).state === 'printed');
    expect(k.printed).toHaveLength(1);
  });

  test('prints a queue in order, one ticket per job, and marks a job printed only after the drain', async () => {
    start([printerOf('k', 'kitchen')]);
    const k = devices.get('k')!;
    let release!: () => void;
    k.hold = new Promise((r) => (release = r));
    const [first] = enqueue('kitchen', 'Alpha');
    const [second] = enqueue('kitchen', 'Beta');
    await sleep(50);
    expect(stateOf(first!).state).toBe('queued'); // the write has not drained yet
    expect(k.printed).toEqual([]);
    release();
    k.hold = undefined;
    await until(() => stateOf(second!).state === 'printed');
    expect(k.printed.map((t) => /1 x (\w+)/.exec(t)![1])).toEqual(['Alpha', 'Beta']);
    expect(stateOf(first!)).toMatchObject({ state: 'printed', printedOn: 'k', attempts: 1 });
  });

  test('an offline printer keeps its jobs queued, retries with backoff, and prints each once when back', async () => {
    start([printerOf('k', 'kitchen')]);
    const k = devices.get('k')!;
    k.paper = 'offline';
    const ids = [...enqueue('kitchen', 'Alpha'), ...enqueue('kitchen', 'Beta')];
    await until(() => stateOf(ids[0]!).attempts >= 3);
    expect(spooler!.statusOf('k')).toMatchObject({ status: 'offline', lastError: { reason: 'offline' } });
    expect(ids.map((id) => stateOf(id).state)).toEqual(['queued', 'queued']);
    expect(stateOf(ids[1]!).attempts).toBe(0); // strictly in order: the second waits behind the first
    k.paper = 'ok';
    await until(() => ids.every((id) => stateOf(id).state === 'printed'));
    await sleep(50);
    expect(k.printed).toHaveLength(2);
    // The first probe at start found it ok, before it went away.
    expect(changes.map((c) => [c.previous, c.status])).toEqual([
      ['unknown', 'ok'],
      ['ok', 'offline'],
      ['offline', 'ok'],
    ]);
  });

  test('paper out holds the queue; paper near end prints', async () => {
    start([printerOf('k', 'kitchen')]);
    const k = devices.get('k')!;
    k.paper = 'out';
    const [id] = enqueue('kitchen', 'Alpha');
    await until(() => spooler!.statusOf('k').status === 'paperOut');
    await sleep(50);
    expect(stateOf(id!).state).toBe('queued');
    expect(k.printed).toEqual([]);
    k.paper = 'nearEnd';
    await until(() => stateOf(id!).state === 'printed');
    expect(spooler!.statusOf('k').status).toBe('paperNearEnd');
    // Published before the job printed: the queue still held it.
    expect(changes.at(-1)).toMatchObject({ tenantId: T, status: 'paperNearEnd', previous: 'paperOut', queueDepth: 1 });
  });

  test('a kitchen ticket older than the max age expires unprinted; a claim slip does not', async () => {
    start([printerOf('k', 'kitchen'), printerOf('c', 'counter')], { kitchenMaxAgeMinutes: 0.001 }); // 60 ms
    devices.get('k')!.paper = 'offline';
    devices.get('c')!.paper = 'offline';
    const [kitchen] = enqueue('kitchen', 'Alpha');
    const [claim] = enqueue('claim', 'Alpha');
    await until(() => stateOf(kitchen!).state === 'expired');
    devices.get('k')!.paper = 'ok';
    devices.get('c')!.paper = 'ok';
    await until(() => stateOf(claim!).state === 'printed');
    await sleep(50);
    expect(devices.get('k')!.printed).toEqual([]);
    expect(stateOf(kitchen!).doneMs).not.toBeNull();
  });

  test('a printer down longer than backupAfter has its queue printed by its backup, headed FOR: it', async () => {
    start([printerOf('k', 'kitchen', { backup: 'c' }), printerOf('c', 'counter')], { backupAfterSeconds: 0.1 });
    devices.get('k')!.paper = 'offline';
    const ids = [...enqueue('kitchen', 'Alpha'), ...enqueue('kitchen', 'Beta')];
    await until(() => ids.every((id) => stateOf(id).state === 'printed'));
    expect(ids.map((id) => stateOf(id).printedOn)).toEqual(['c', 'c']);
    const printed = devices.get('c')!.printed;
    expect(printed.map((t) => /1 x (\w+)/.exec(t)![1])).toEqual(['Alpha', 'Beta']);
    expect(printed.every((t) => t.includes('ZAMIAST / FOR: k'))).toBe(true);
    expect(spooler!.statusOf('k')).toMatchObject({ status: 'offline', divertedTo: 'c' });

    devices.get('k')!.paper = 'ok'; // back: it takes its own queue again
    await until(() => spooler!.statusOf('k').status === 'ok');
    const [later] = enqueue('kitchen', 'Gamma');
    await until(() => stateOf(later!).state === 'printed');
    expect(stateOf(later!).printedOn).toBe('k');
    expect(devices.get('k')!.printed[0]).not.toContain('FOR:');
  });

  test('stop: a write still in flight after the grace is abandoned, unrecorded, its port closed', async () => {
    const s = start([printerOf('k', 'kitchen')]);
    const k = devices.get('k')!;
    k.hold = new Promise(() => undefined); // never drains
    const [id] = enqueue('kitchen', 'Alpha');
    await sleep(30);
    await s.stop(50);
    spooler = undefined;
    expect(stateOf(id!)).toMatchObject({ state: 'queued', printedOn: null });
    expect(k.closed).toBe(1);
  });
});
