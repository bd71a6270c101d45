import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, expect, test } from 'vitest';
import { createSystemdNotifier, watchdogPingMs } from './watchdog.js';

test('pings at half of WATCHDOG_USEC, only for the process WATCHDOG_PID names', () => {
  expect(watchdogPingMs({ WATCHDOG_USEC: '30000000' }, 42)).toBe(15_000);
  expect(watchdogPingMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '42' }, 42)).toBe(15_000);
  expect(watchdogPingMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '41' }, 42)).toBeUndefined();
  expect(watchdogPingMs({ WATCHDOG_USEC: '1000' }, 42)).toBe(1);
  for (const bad of [undefined, '', '0', '-5', '1e6', 'abc', '9999999999999999']) {
    expect(watchdogPingMs({ WATCHDOG_USEC: bad }, 42)).toBeUndefined();
  }
});

// A stand-in for systemd-notify that appends its arguments to a file, one call a line.
const dir = mkdtempSync(join(tmpdir(), 'vb-notify-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fakeNotify = join(dir, 'fake-notify');
const calls = join(dir, 'calls');
writeFileSync(fakeNotify, `#!/bin/sh\necho "$*" >> ${calls}\n`);
chmodSync(fakeNotify, 0o755);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lines = () => {
  try {
    return readFileSync(calls, 'utf8').trim().split('\n');
  } catch {
    return [];
  }
};

test('READY=1 with a status, WATCHDOG=1 while running, STOPPING=1 and no ping after it', async () => {
  const log = pino({ level: 'silent' });
  const n = createSystemdNotifier({
    env: { NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: '100000' },
    pid: 1,
    log,
    command: fakeNotify,
  });
  n.ready('serving on 0.0.0.0:8080');
  await sleep(400);
  n.stopping();
  await n.close();
  const seen = lines();
  expect(seen[0]).toBe('READY=1 STATUS=serving on 0.0.0.0:8080');
  expect(seen.at(-1)).toBe('STOPPING=1');
  // 50 ms pings for 400 ms: about 8 (a generous band on a busy machine).
  const pings = seen.filter((l) => l === 'WATCHDOG=1').length;
  expect(pings).toBeGreaterThanOrEqual(2);
  expect(pings).toBeLessThanOrEqual(10);
  await sleep(150);
  expect(lines()).toEqual(seen);
});

test('without NOTIFY_SOCKET nothing is sent; a missing systemd-notify is logged once, not at every ping', async () => {
  const quiet = createSystemdNotifier({
    env: { WATCHDOG_USEC: '100000' },
    pid: 1,
    log: pino({ level: 'silent' }),
    command: '/nonexistent',
  });
  quiet.ready('x');
  quiet.stopping();
  await quiet.close();

  const errors: string[] = [];
  const log = pino({ level: 'error' }, { write: (line: string) => errors.push(line) });
  const n = createSystemdNotifier({
    env: { NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: '60000' },
    pid: 1,
    log,
    command: join(dir, 'missing'),
  });
  n.ready('x');
  await sleep(300);
  n.stopping();
  await n.close();
  expect(errors).toHaveLength(1);
  expect(errors[0]).toContain('cannot notify systemd');
});
