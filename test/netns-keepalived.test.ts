import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import {
  type KeepalivedHandle,
  keepalivedConfig,
  notifyToFile,
  readStates,
  startKeepalived,
} from './support/keepalived.js';
import { createLan, type Lan, type LanBox, netnsUnavailable } from './support/netns.js';

// The harness for the standby box, proved on its own: two boxes on a bridged LAN in network namespaces, each
// with a tiny HTTP server answering its name, keepalived on both moving the floating IP, and a client polling
// the floating IP from a third namespace (test/support/netns.ts, test/support/keepalived.ts).
const skip = netnsUnavailable(import.meta.url);

// Each namespace has its own ports, so a fixed port cannot collide with anything on the machine.
const PORT = 8080;
const SERVER = `require('node:http').createServer((q, s) => s.end(process.argv[1])).listen(${PORT}, '0.0.0.0')`;
// One answer line every 100 ms: "<ms since epoch> <body or -error>". A new connection each time (agent: false),
// so every request goes where the client's ARP entry for the VIP points now.
const POLLER = `
const http = require('node:http');
const get = () => new Promise((resolve) => {
  const req = http.get(process.argv[1], { agent: false, timeout: 300 }, (res) => {
    let body = '';
    res.on('data', (d) => (body += d)).on('end', () => resolve(body));
  });
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', (e) => resolve('-' + (e.code ?? e.message)));
});
(async () => { for (;;) { process.stdout.write(Date.now() + ' ' + (await get()) + '\\n'); await new Promise((r) => setTimeout(r, 100)); } })();
`;

// One GET from inside a namespace: the body on stdout, exit 1 on an error or after 1 s.
const GET = `require('node:http')
  .get(process.argv[1], { timeout: 1000 }, (res) => res.pipe(process.stdout))
  .on('timeout', () => process.exit(1))
  .on('error', () => process.exit(1))`;

let lan: Lan;
let dir: string;
const servers: (ChildProcess | undefined)[] = [];
const keepalived: (KeepalivedHandle | undefined)[] = [];
const answers: { at: number; body: string }[] = [];

/** The body of the newest answer the client got from a request sent after `since`. */
const answerSince = (since: number) => answers.findLast((a) => a.at - 100 > since)?.body;

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (await check()) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 50));
  }
  const states = keepalived.map((k) => k?.state()).join(', ');
  const logs = keepalived.map((k, i) => `box ${i}:\n${k?.log().split('\n').slice(-8).join('\n')}`).join('\n');
  throw new Error(
    `${what}: not within ${timeoutMs} ms (states ${states}, last answer ${answers.at(-1)?.body})\n${logs}`,
  );
}

const httpGet = (ns: string, url: string) => lan.run(ns, process.execPath, ['-e', GET, url]);
const running = (p: ChildProcess | undefined) => p !== undefined && p.exitCode === null && p.signalCode === null;
const stateFile = (i: number) => join(dir, `state-${lan.boxes[i]!.name}`);
const vipOn = async (i: number) =>
  (await lan.run(lan.boxes[i]!.ns, 'ip', ['-br', 'addr', 'show', lan.boxes[i]!.iface])).includes(`${lan.vip}/`);

function startServer(i: number): void {
  servers[i] = lan.spawn(lan.boxes[i]!.ns, process.execPath, ['-e', SERVER, lan.boxes[i]!.name], { stdio: 'ignore' });
}

async function startBoxKeepalived(i: number): Promise<void> {
  const box = lan.boxes[i]!;
  const conf = keepalivedConfig({
    iface: box.iface,
    routerId: 51,
    // Box a is the primary: 150 against 100, and a failed check (weight -60) takes it to 90, below the standby.
    priority: i === 0 ? 150 : 100,
    advertInt: 0.5,
    srcIp: box.ip,
    peers: lan.boxes.filter((b) => b !== box).map((b) => b.ip),
    vip: lan.vip,
    prefixLen: lan.prefixLen,
    // Does the box's own server accept a connection? bash's /dev/tcp: no extra package needed.
    check: { script: `/bin/bash -c 'exec 3<>/dev/tcp/127.0.0.1/${PORT}'`, interval: 1, fall: 2, rise: 2, weight: -60 },
    notify: notifyToFile(stateFile(i)),
  });
  const handle = startKeepalived(lan, i, conf, dir);
  keepalived[i] = handle;
  await handle.ready();
}

/** Whatever the previous test broke is mended, and box a holds the VIP again: the tests run in a random order. */
async function healthyPair(): Promise<void> {
  await lan.restoreBetweenBoxes();
  for (let i = 0; i < lan.boxes.length; i++) {
    await lan.restore(i);
    if (!running(servers[i])) startServer(i);
    if (!running(keepalived[i]?.proc)) await startBoxKeepalived(i);
  }
  const since = Date.now();
  await until(
    'box a MASTER, box b BACKUP, the VIP answering a',
    () => keepalived[0]!.state() === 'MASTER' && keepalived[1]!.state() === 'BACKUP' && answerSince(since) === 'a',
    15_000,
  );
}

beforeAll(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'vb-netns-'));
  lan = await createLan();
  const poller = lan.spawn(lan.client.ns, process.execPath, ['-e', POLLER, `http://${lan.vip}:${PORT}/`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let rest = '';
  poller.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      const [at, body] = line.split(' ');
      answers.push({ at: Number(at), body: body ?? '' });
    }
  });
});
afterAll(async () => {
  await Promise.all(keepalived.map((k) => k?.stop()));
  await lan?.close();
});
beforeEach(async () => {
  if (!skip) await healthyPair();
});

describe.skipIf(skip)('two boxes, keepalived and a floating IP on a LAN of namespaces', () => {
  test('the primary holds the VIP; the standby does not; notify ran on each', async () => {
    expect(await vipOn(0)).toBe(true);
    expect(await vipOn(1)).toBe(false);
    expect(readStates(stateFile(0)).at(-1)).toBe('MASTER');
    expect(readStates(stateFile(1)).at(-1)).toBe('BACKUP');
  });

  test("the primary's server dies: the standby answers on the VIP within 10 s", async () => {
    const killedAt = Date.now();
    servers[0]!.kill('SIGKILL');
    const ms = await until('the VIP answering b', () => answerSince(killedAt) === 'b', 10_000);
    console.log(`server of box a killed: the VIP answered b after ${ms} ms`);
    // The check failed twice (fall 2, 1 s apart): a's priority 150 - 60 = 90 is below b's 100.
    expect(keepalived[0]!.log()).toMatch(/Changing effective priority from 150 to 90/);
    await until('a BACKUP', () => keepalived[0]!.state() === 'BACKUP', 2000);
    expect(readStates(stateFile(1)).at(-1)).toBe('MASTER');
  });

  test("the primary's keepalived is killed (-9, a dead box): the standby takes the VIP", async () => {
    const killedAt = Date.now();
    await keepalived[0]!.kill();
    const ms = await until('the VIP answering b', () => answerSince(killedAt) === 'b', 10_000);
    console.log(`keepalived of box a killed: the VIP answered b after ${ms} ms`);
    expect(keepalived[1]!.state()).toBe('MASTER');
    // Nothing was left to take the address off box a: it still holds the VIP, and only b's gratuitous ARPs
    // steer the client. A box whose keepalived died while the box lives must not serve as primary.
    expect(await vipOn(0)).toBe(true);
    expect(await vipOn(1)).toBe(true);
  });

  test("the primary's cable is pulled: it goes to FAULT, the standby answers; plugged back, a is MASTER", async () => {
    const cutAt = Date.now();
    await lan.cut(0);
    const ms = await until('the VIP answering b', () => answerSince(cutAt) === 'b', 10_000);
    console.log(`cable of box a pulled: the VIP answered b after ${ms} ms`);
    // Its interface lost carrier: keepalived gives the VIP up at once (FAULT) instead of holding it in the dark.
    await until('a FAULT', () => keepalived[0]!.state() === 'FAULT', 2000);
    expect(await vipOn(0)).toBe(false);
    await lan.restore(0);
    await until('a MASTER, b BACKUP', () => keepalived[0]!.state() === 'MASTER', 10_000);
  });

  test('the boxes lose each other but not the client: both become MASTER; mended, one MASTER again', async () => {
    const [a, b] = lan.boxes as [LanBox, LanBox];
    const get = (ns: string, host: string) => httpGet(ns, `http://${host}:${PORT}/`).catch(() => 'unreachable');
    await lan.cutBetweenBoxes();
    // The harness itself: a and b lose each other, the client still reaches both.
    expect(await get(a.ns, b.ip)).toBe('unreachable');
    expect(await get(b.ns, a.ip)).toBe('unreachable');
    expect(await get(lan.client.ns, a.ip)).toBe('a');
    expect(await get(lan.client.ns, b.ip)).toBe('b');
    // VRRP split brain: b hears no adverts from a and takes the VIP; a, hearing nothing lower, keeps it. Both
    // hold the address and the client goes wherever its last ARP answer pointed. keepalived cannot tell a dead
    // peer from an unreachable one: this is why the standby box needs fencing before it accepts writes.
    await until('b MASTER too', () => keepalived[1]!.state() === 'MASTER', 10_000);
    expect(keepalived[0]!.state()).toBe('MASTER');
    expect(await vipOn(0)).toBe(true);
    expect(await vipOn(1)).toBe(true);
    console.log(`split brain: the client's requests to the VIP went to ${answers.at(-1)?.body}`);
    await lan.restoreBetweenBoxes();
    // b hears a's higher priority again and steps down; a never stopped being MASTER.
    const ms = await until('b BACKUP', () => keepalived[1]!.state() === 'BACKUP', 10_000);
    console.log(`link between the boxes mended: b was BACKUP again after ${ms} ms`);
    expect(keepalived[0]!.state()).toBe('MASTER');
    expect(await vipOn(1)).toBe(false);
  });

  test('delay: netem holds box b back by the given time', async (ctx) => {
    if (!(await lan.canDelay())) ctx.skip('this kernel has no sch_netem');
    const b = lan.boxes[1]!;
    const timed = async () => {
      const start = Date.now();
      await httpGet(lan.client.ns, `http://${b.ip}:${PORT}/`);
      return Date.now() - start;
    };
    const before = await timed();
    await lan.delay(1, 300);
    try {
      // A TCP handshake and a request: at least two of b's packets wait 300 ms each.
      expect((await timed()) - before).toBeGreaterThan(500);
    } finally {
      await lan.delay(1, 0);
    }
  });
});
