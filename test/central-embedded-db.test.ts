import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, inject, test } from 'vitest';
import { expectOneLineFailure } from './support/cli.js';
import { CENTRAL_DEMO, centralTokenRequest, startTestCentral, type TestCentral } from './support/central.js';
import { freePort } from './support/ports.js';
import { enrolledDevice } from './support/sim-device.js';

// The central's embedded PostgreSQL (docs/sync.md "The central's ports", "When its PostgreSQL dies"): its port, and
// the central outliving its death. Embedded only: on the central-pg15 project every central runs by URL.

const centrals: TestCentral[] = [];
const blockers: Server[] = [];
afterEach(async () => {
  for (const b of blockers.splice(0)) await new Promise((r) => b.close(r));
  // SIGTERM: a central killed with -9 would leave its PostgreSQL running.
  for (const c of centrals.splice(0)) await c.stop();
});

async function started(args: string[] = []): Promise<TestCentral> {
  const central = await startTestCentral({ args });
  centrals.push(central);
  return central;
}

const facts = (c: TestCentral) =>
  JSON.parse(readFileSync(join(c.dataDir, 'central-db.json'), 'utf8')) as { port: number };
const postmasterPid = (c: TestCentral) =>
  Number(readFileSync(join(c.dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The PostgreSQL processes running on the central's data directory (the postmaster's command line names it). */
const postgresOf = (c: TestCentral): number[] =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(join(c.dataDir, 'postgres'));
      } catch {
        return false;
      }
    })
    .map(Number);

/** Resolves once a log line of `c` matches, else fails after `ms`. */
async function logged(c: TestCentral, pattern: RegExp, ms = 20_000, from = 0): Promise<number> {
  for (const until = Date.now() + ms; Date.now() < until; ) {
    const at = c.logs.findIndex((l, i) => i >= from && pattern.test(l));
    if (at >= 0) return at;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no log line ${pattern} within ${ms} ms:\n${c.logs.slice(-20).join('\n')}`);
}

/**
 * The postmaster killed with -9 and its port taken at once, so every restart fails until `release`. The taker
 * resets each connection, as a port nobody listens on refuses it: the central's clients fail at once.
 */
async function killAndHoldPort(c: TestCentral): Promise<{ release(): Promise<void> }> {
  const { port } = facts(c);
  process.kill(postmasterPid(c), 'SIGKILL');
  const blocker = createServer((socket) => socket.resetAndDestroy());
  for (;;) {
    const bound = await new Promise<boolean>((resolve) => {
      blocker.once('error', () => resolve(false));
      blocker.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  blockers.push(blocker);
  await logged(c, /the embedded PostgreSQL died/);
  return {
    release: () =>
      new Promise<void>((resolve) => {
        blockers.splice(blockers.indexOf(blocker), 1);
        blocker.close(() => resolve());
      }),
  };
}

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}
const answerOf = async (res: Response): Promise<Answer> => ({
  status: res.status,
  headers: res.headers,
  body: await res.json(),
});

/** 503 `unavailable` (the token endpoint: RFC 6749's shape) with a Retry-After of whole seconds. */
async function expectUnavailable(what: string, answer: Promise<Answer>): Promise<void> {
  const { status, headers, body } = await answer;
  expect({ what, status, retryAfter: headers.get('retry-after') }).toEqual({
    what,
    status: 503,
    retryAfter: expect.stringMatching(/^\d+$/),
  });
  if (body.codes) expect(body.codes[0].code, what).toBe('unavailable');
}

describe.skipIf(inject('debianPostgres') !== undefined)('the embedded PostgreSQL', () => {
  test('--database-port N: the cluster listens on 127.0.0.1:N and the facts file says so', async () => {
    const port = await freePort();
    const c = await started(['--database-port', String(port)]);
    expect(facts(c).port).toBe(port);
    const client = new pg.Client({ connectionString: c.databaseUrl });
    await client.connect();
    try {
      expect(client.port).toBe(port);
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await client.end();
    }
  });

  test('--database-port on a port in use: exit 69, one line naming it; a bad one or with --database-url: 64', async () => {
    const blocker = createServer();
    blockers.push(blocker);
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const taken = (blocker.address() as { port: number }).port;
    const run = (...args: string[]) => {
      const r = spawnSync(process.execPath, ['dist/main.cjs', 'central', 'serve', '--port', '0', ...args], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
    };
    const dataDir = mkdtempSync(join(tmpdir(), 'vb-central-'));
    const inUse = run('--data-dir', dataDir, '--database-port', String(taken));
    expectOneLineFailure(inUse, new RegExp(`--database-port ${taken}: .*is in use`), 69, 'venue-box central');
    for (const bad of ['0', '65536', 'x', '-1']) {
      const r = run('--data-dir', dataDir, `--database-port=${bad}`);
      expectOneLineFailure(r, /--database-port must be a port number/, 64, 'venue-box central');
    }
    const both = run('--data-dir', dataDir, '--database-port', '5432', '--database-url', 'postgres://u:p@127.0.0.1/x');
    expectOneLineFailure(both, /does not go with --database-url/, 64, 'venue-box central');
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('postmaster killed with -9: 503 with Retry-After and /readyz 503 at once; started again, nothing lost', async () => {
    const c = await started();
    const device = await enrolledDevice(c, CENTRAL_DEMO.venues[0]);
    for (let i = 0; i < 20; i++) device.order();
    expect((await device.send(1, 20)).status).toBe(200);
    const token = await c.hqToken();
    const hq = (path: string) => fetch(c.url(path), { headers: { authorization: `Bearer ${token}` } }).then(answerOf);
    const before = postmasterPid(c);

    const port = await killAndHoldPort(c);
    // Not ready from the moment it died: no probe timeout, no cached "ready".
    await expectUnavailable('/readyz', fetch(c.url('/readyz')).then(answerOf));
    await expectUnavailable('HQ orders', hq('/hq-api/api/orders'));
    await expectUnavailable('HQ devices', hq('/hq-api/api/devices'));
    await expectUnavailable('hello', device.hello());
    for (let i = 0; i < 5; i++) device.order();
    await expectUnavailable('batch', device.send(21, 25));
    const signIn = { grant_type: 'password', ...CENTRAL_DEMO.hqUser };
    await expectUnavailable('token', centralTokenRequest(c, signIn).then(answerOf));
    // A restart that fails (its port held) is tried again after a longer wait, and so on.
    await logged(c, /did not start again yet/);
    await expectUnavailable('/readyz while restarts fail', fetch(c.url('/readyz')).then(answerOf));
    await port.release();

    await logged(c, /the embedded PostgreSQL is running again/, 30_000);
    expect(postmasterPid(c)).not.toBe(before);
    expect(alive(before)).toBe(false);
    // Its children, just forked, may still show the postmaster's command line: the new one is among them.
    expect(postgresOf(c)).toContain(postmasterPid(c));
    const ready = await fetch(c.url('/readyz'));
    expect(ready.status).toBe(200);
    // PostgreSQL's crash recovery kept every acknowledged event; the batch refused meanwhile goes in now.
    expect((await device.hello()).body.head.seq).toBe(20);
    expect((await device.send(21, 25)).status).toBe(200);
    const orders = await hq(`/hq-api/api/orders?deviceId=${device.deviceId}&limit=100`);
    expect(orders.body.items).toHaveLength(25);
    expect(c.logs.filter((l) => /"level":"(error|fatal)"/.test(l) && /request failed/.test(l))).toEqual([]);
    expect(await c.stop()).toBe(0);
  }, 60_000);

  test('SIGTERM while the cluster is down and its restarts fail: exit 0 within seconds, no PostgreSQL left', async () => {
    const c = await started();
    await killAndHoldPort(c);
    await expectUnavailable('/readyz', fetch(c.url('/readyz')).then(answerOf));
    const asked = Date.now();
    expect(await c.stop('SIGTERM')).toBe(0);
    expect(Date.now() - asked).toBeLessThan(10_000);
    expect(c.logs.filter((l) => /did not finish in time/.test(l))).toEqual([]);
    expect(postgresOf(c)).toEqual([]);
  }, 40_000);

  test('SIGTERM while the cluster is being started again: exit 0, its new postmaster stopped', async () => {
    const c = await started();
    const from = c.logs.length;
    process.kill(postmasterPid(c), 'SIGKILL');
    await logged(c, /the embedded PostgreSQL died/, 20_000, from);
    // Within the first restart's wait, or while it starts: either way nothing is left running.
    await new Promise((r) => setTimeout(r, 900));
    expect(await c.stop('SIGTERM')).toBe(0);
    const pid = (() => {
      try {
        return postmasterPid(c);
      } catch {
        return undefined;
      }
    })();
    if (pid !== undefined) expect(alive(pid)).toBe(false);
    expect(postgresOf(c)).toEqual([]);
  }, 40_000);

  test('a cluster that does not start again: the central gives up and exits 69 for its supervisor', async () => {
    const c = await started();
    await killAndHoldPort(c);
    const exited = await Promise.race([
      new Promise<number | null>((r) => c.proc.once('exit', (code) => r(code))),
      new Promise<'running'>((r) => setTimeout(() => r('running'), 80_000)),
    ]);
    expect(exited).toBe(69);
    // One line for the operator, besides the JSON log: exit 69's reason and PostgreSQL's last words.
    expect(c.logs.filter((l) => !l.startsWith('{'))).toEqual([
      expect.stringMatching(/^venue-box central: .*embedded PostgreSQL died and did not start again \(6 attempts\): ./),
    ]);
    expect(postgresOf(c)).toEqual([]);
  }, 100_000);
});
