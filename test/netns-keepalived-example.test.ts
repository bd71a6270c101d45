import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type KeepalivedHandle, startKeepalived } from './support/keepalived.js';
import { createLan, type Lan, netnsUnavailable } from './support/netns.js';

// native-config/keepalived.conf.example, the file an installer puts on both boxes, run as it is on a LAN of
// namespaces (test/support/netns.ts): only the venue's addresses, the CLI's path and the script user change.
// Its `venue-box standby check|promote` commands are stand-ins here that record their calls; the check passes
// while a file named `healthy` exists beside them.
const skip = netnsUnavailable(import.meta.url);

const EXAMPLE = readFileSync(new URL('../native-config/keepalived.conf.example', import.meta.url), 'utf8');
const FAKE_CLI = (boxDir: string) => `#!/bin/sh
case "$2" in
  check) exec test -e ${boxDir}/healthy ;;
  *) echo "$2" >> ${boxDir}/calls ;;
esac
`;

let lan: Lan;
let dir: string;
const keepalived: KeepalivedHandle[] = [];
const boxDir = (i: number) => join(dir, lan.boxes[i]!.name);
const calls = (i: number) => {
  const file = join(boxDir(i), 'calls');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
};
const vipOn = async (i: number) =>
  (await lan.run(lan.boxes[i]!.ns, 'ip', ['-br', 'addr', 'show', lan.boxes[i]!.iface])).includes(`${lan.vip}/`);

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (check()) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms (states ${keepalived.map((k) => k.state()).join(', ')})`);
}

beforeAll(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'vb-netns-example-'));
  lan = await createLan();
  const [a, b] = lan.boxes;
  for (const [i, id] of ['primary', 'standby'].entries()) {
    mkdirSync(boxDir(i));
    writeFileSync(join(boxDir(i), 'venue-box'), FAKE_CLI(boxDir(i)));
    chmodSync(join(boxDir(i), 'venue-box'), 0o755);
    writeFileSync(join(boxDir(i), 'healthy'), '');
    const conf = EXAMPLE.replaceAll('/opt/venue-box/current/venue-box', join(boxDir(i), 'venue-box'))
      .replaceAll('192.168.1.100/24', `${lan.vip}/${lan.prefixLen}`)
      .replaceAll('192.168.1.11', a!.ip)
      .replaceAll('192.168.1.12', b!.ip)
      // The box's user does not exist here; the stand-in CLI is root's.
      .replace('script_user venue-box', 'script_user root');
    const handle = startKeepalived(lan, i, conf, dir, ['--config-id', id]);
    keepalived.push(handle);
    await handle.ready();
  }
});
afterAll(async () => {
  await Promise.all(keepalived.map((k) => k.stop()));
  await lan?.close();
});

describe.skipIf(skip)('native-config/keepalived.conf.example on two boxes', () => {
  // One story, in order: each step starts from where the one before left the pair.
  test('primary promoted; its check fails: FAULT and the standby promoted; healthy again: it stays standby', async () => {
    await until(
      'a MASTER, b BACKUP',
      () => keepalived[0]!.state() === 'MASTER' && keepalived[1]!.state() === 'BACKUP',
      10_000,
    );
    expect(await vipOn(0)).toBe(true);
    await until('promote on a', () => calls(0).at(-1) === 'promote', 2000);
    expect(calls(1)).toEqual([]);

    const failedAt = Date.now();
    rmSync(join(boxDir(0), 'healthy'));
    // fall 2 at interval 1: about 2 s of failures, then FAULT gives the VIP up at once.
    await until('b MASTER', () => keepalived[1]!.state() === 'MASTER', 15_000);
    console.log(`example config: check of box a failing, b MASTER after ${Date.now() - failedAt} ms`);
    expect(keepalived[0]!.state()).toBe('FAULT');
    expect(await vipOn(0)).toBe(false);
    expect(await vipOn(1)).toBe(true);
    await until('promote on b', () => calls(1).at(-1) === 'promote', 2000);
    expect(calls(0)).toEqual(['promote']);

    writeFileSync(join(boxDir(0), 'healthy'), '');
    await until('a BACKUP', () => keepalived[0]!.state() === 'BACKUP', 10_000);
    // nopreempt: priority 150 hears b's adverts at 100 and leaves the VIP there. Three advert intervals and
    // more: long enough for a preempting box to have taken it.
    await new Promise((r) => setTimeout(r, 4000));
    expect(keepalived[1]!.state()).toBe('MASTER');
    expect(keepalived[0]!.state()).toBe('BACKUP');
    expect(await vipOn(0)).toBe(false);
    expect(calls(1).at(-1)).toBe('promote');
  }, 40_000);
});
