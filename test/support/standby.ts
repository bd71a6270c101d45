import { mkdtempSync } from 'node:fs';
import { freePort } from './ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { type StartOptions, startTestBox, type TestBox } from './box.js';
import { runCliAsync } from './cli.js';

/** A port free on loopback now: a box of a pair listens at a fixed address its peer knows. */
export interface StandbyStatusBody {
  role: string;
  state: string;
  term: number;
  connected: boolean;
  lagBytes: number;
  stalls: number;
  primarySilentMs: number | null;
  refusal: string | null;
  lastTakeoverAt: string | null;
}

export async function standbyStatus(box: { url(path: string): string }): Promise<StandbyStatusBody> {
  // A box started again on a port whose last box was killed -9: the client's pooled connection to that one may
  // still look open, and the first request on it fails before any answer. A GET is retried once then, as an HTTP
  // client retries an idempotent request on a connection closed under it (RFC 9110 9.2.2).
  const res = await fetch(box.url('/standby-api/status')).catch((err: Error) => {
    if ((err.cause as { code?: string } | undefined)?.code !== 'UND_ERR_SOCKET') throw err;
    return fetch(box.url('/standby-api/status'));
  });
  expect(res.status).toBe(200);
  return (await res.json()) as StandbyStatusBody;
}

/** Waits (bounded) until the box's standby status matches. */
export async function waitForStatus(
  box: { url(path: string): string },
  match: (s: StandbyStatusBody) => boolean,
  timeoutMs = 15_000,
): Promise<StandbyStatusBody> {
  const until = Date.now() + timeoutMs;
  let last: StandbyStatusBody | undefined;
  while (Date.now() < until) {
    last = await standbyStatus(box).catch(() => last);
    if (last && match(last)) return last;
    await sleep(50);
  }
  throw new Error(`standby status never matched; last: ${JSON.stringify(last)}`);
}

/** `venue-box standby join` of a fresh data directory with a code the primary printed. */
export async function joinStandby(primary: TestBox, standbyPort: number, dataDir: string): Promise<void> {
  const code = await runCliAsync(['standby', 'code', '--data-dir', primary.dataDir]);
  expect(code.code, code.stderr).toBe(0);
  const pairing = /pairing code: (\S+)/.exec(code.stdout)![1]!;
  const joined = await runCliAsync([
    'standby',
    'join',
    `http://127.0.0.1:${primary.port}`,
    '--code',
    pairing,
    '--self',
    `http://127.0.0.1:${standbyPort}`,
    '--data-dir',
    dataDir,
  ]);
  expect(joined.code, joined.stderr).toBe(0);
}

export interface Pair {
  primary: TestBox;
  standby: TestBox;
  primaryPort: number;
  standbyPort: number;
}

/** A primary with the demo and a standby that holds its copy and is in step (confirmations wait for it). */
export async function startPair(
  options: { config?: StartOptions['config']; standbyEnv?: NodeJS.ProcessEnv } = {},
): Promise<Pair> {
  const primaryPort = await freePort();
  const standbyPort = await freePort();
  const primary = await startTestBox({ port: primaryPort, config: options.config });
  const standbyDir = mkdtempSync(join(tmpdir(), 'vb-standby-'));
  await joinStandby(primary, standbyPort, standbyDir);
  const standby = await startTestBox({
    dataDir: standbyDir,
    port: standbyPort,
    demo: false,
    config: options.config,
    env: options.standbyEnv,
  });
  await waitForStatus(primary, (s) => s.state === 'synchronous');
  return { primary, standby, primaryPort, standbyPort };
}
