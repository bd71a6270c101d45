import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { newOrder } from './support/orders.js';
import { skipWithout } from './support/system-packages.js';

// systemd's notification socket without systemd: a unix datagram socket at a temp NOTIFY_SOCKET path, read by
// python3 (Node cannot), which prints each message with its arrival time and closes the descriptor that
// systemd-notify's BARRIER=1 passes, as the service manager does. The box sends through the real systemd-notify.
const RECEIVER = `
import array, json, os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print(json.dumps({"bound": True}), flush=True)
while True:
    msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(16 * 4))
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds = array.array("i")
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
            for fd in fds:
                os.close(fd)
    print(json.dumps({"t": time.time() * 1000, "msg": msg.decode()}), flush=True)
`;

const skip = skipWithout(import.meta.url, 'python3', 'systemd');

interface Message {
  t: number;
  msg: string;
}

const children: ChildProcess[] = [];
const boxes: TestBox[] = [];
afterAll(async () => {
  for (const b of boxes) await b.stop();
  for (const c of children) c.kill();
});

async function startReceiver(path: string): Promise<Message[]> {
  const proc = spawn('python3', ['-c', RECEIVER, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(proc);
  const messages: Message[] = [];
  await new Promise<void>((resolve, reject) => {
    proc.on('exit', (code) => reject(new Error(`receiver exited with ${code}`)));
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as Message & { bound?: boolean };
      if (entry.bound) resolve();
      else messages.push(entry);
    });
  });
  return messages;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe.skipIf(skip)('sd_notify through systemd-notify (Type=notify, WatchdogSec)', () => {
  test('READY=1 once listening, WATCHDOG=1 every half WATCHDOG_USEC, none while the loop is blocked, STOPPING=1 at SIGTERM', async () => {
    const notifySocket = join(mkdtempSync(join(tmpdir(), 'vb-notify-')), 'notify');
    const messages = await startReceiver(notifySocket);
    // WatchdogSec=1s: a ping every 500 ms.
    const box = await startTestBox({ env: { NOTIFY_SOCKET: notifySocket, WATCHDOG_USEC: '1000000' } });
    boxes.push(box);
    const listeningAt = Date.parse(
      (JSON.parse(box.logs.find((l) => l.includes('venue-box listening'))!) as { time: string }).time,
    );
    const pings = () => messages.filter((m) => m.msg === 'WATCHDOG=1').map((m) => m.t);

    await sleep(2600);
    const ready = messages.filter((m) => m.msg.startsWith('READY=1'));
    expect(ready).toHaveLength(1);
    expect(ready[0]!.msg).toBe(`READY=1\nSTATUS=serving on 127.0.0.1:${box.port}`);
    expect(ready[0]!.t).toBeGreaterThanOrEqual(listeningAt);
    expect(messages.findIndex((m) => m.msg === 'WATCHDOG=1')).toBeGreaterThan(messages.indexOf(ready[0]!));
    const steady = pings();
    expect(steady.length).toBeGreaterThanOrEqual(3);
    expect(median(gaps(steady))).toBeGreaterThan(300);
    expect(median(gaps(steady))).toBeLessThan(1000);

    // The loop blocked by a real cause: another connection (a `stock rebuild`, an sqlite3 shell) holds the write
    // lock, and the box's next write waits for it on the event loop (busy_timeout, up to 5 s).
    const token = (await box.token()).access_token;
    const db = new Database(join(box.dataDir, 'venue-box.db'));
    db.exec('BEGIN IMMEDIATE');
    const blockedFrom = Date.now();
    const order = box.post(
      '/ordering-api/api/order/new',
      token,
      newOrder(DEMO.openVenue, [{ productId: 'woda', quantity: 1 }]),
    );
    await sleep(3000);
    db.exec('COMMIT');
    const blockedUntil = Date.now();
    db.close();
    expect((await order).status).toBe(200);
    await sleep(1600);

    // A ping spawned just before the block may still land in its first moments; none after, until it ends.
    const during = pings().filter((t) => t > blockedFrom + 500 && t < blockedUntil - 100);
    expect(during).toEqual([]);
    expect(Math.max(...gaps(pings()))).toBeGreaterThan(2500);
    expect(pings().filter((t) => t > blockedUntil).length).toBeGreaterThanOrEqual(2);

    const stoppedAt = Date.now();
    expect(await box.stop()).toBe(0);
    await sleep(100);
    const stopping = messages.filter((m) => m.msg === 'STOPPING=1');
    expect(stopping).toHaveLength(1);
    expect(stopping[0]!.t).toBeGreaterThanOrEqual(stoppedAt);
    expect(messages.filter((m) => m.msg !== 'BARRIER=1').at(-1)!.msg).toBe('STOPPING=1');
    // Every message went with its barrier (systemd-notify waits until the manager has read it).
    expect(messages.filter((m) => m.msg === 'BARRIER=1').length).toBe(messages.length / 2);
  }, 30_000);

  test('without WATCHDOG_USEC: READY=1 and STOPPING=1 only', async () => {
    const notifySocket = join(mkdtempSync(join(tmpdir(), 'vb-notify-')), 'notify');
    const messages = await startReceiver(notifySocket);
    const plain = await startTestBox({ env: { NOTIFY_SOCKET: notifySocket } });
    boxes.push(plain);
    await sleep(1200);
    expect(await plain.stop()).toBe(0);
    await sleep(100);
    expect(messages.map((m) => m.msg).filter((m) => m !== 'BARRIER=1')).toEqual([
      `READY=1\nSTATUS=serving on 127.0.0.1:${plain.port}`,
      'STOPPING=1',
    ]);
  });
});
