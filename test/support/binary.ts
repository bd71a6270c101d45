import { type ChildProcess, spawn } from 'node:child_process';
import { expect } from 'vitest';
import { DEMO, launch, requestToken } from './box.js';
import { openSocket } from './socket.js';

/** The single binary started from its directory (test/binary.test.ts, test/binary-arm64.test.ts). */
export interface RunningBinary {
  port: number;
  logs: string[];
  proc: ChildProcess;
  stop(): Promise<number | null>;
}

export interface BinaryOptions {
  /** Runs the binary through this program (qemu-aarch64-static for an arm64 binary on x64). */
  emulator?: string;
  /** How long to wait for "venue-box listening" (an emulated start takes seconds). */
  startTimeoutMs?: number;
}

/** Starts `./venue-box args` in `cwd` and waits until it listens; stop() sends SIGTERM and gives the exit code. */
export async function startBinary(
  cwd: string,
  env: NodeJS.ProcessEnv,
  args: string[],
  options: BinaryOptions = {},
): Promise<RunningBinary> {
  const [command, argv] = options.emulator ? [options.emulator, ['./venue-box', ...args]] : ['./venue-box', args];
  const { proc, logs, port, exited } = await launch(
    spawn(command, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }),
    'the binary',
    options.startTimeoutMs,
  );
  return {
    port,
    logs,
    proc,
    stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * Uses a running binary as a customer does: an anonymous token, the nearest venues, the ordering socket's HELLO,
 * then a new order whose ORDER_CHANGE arrives on that socket.
 */
export async function servesAnOrder(port: number, frameTimeoutMs?: number): Promise<void> {
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;

  const tokenRes = await requestToken({ url }, { grant_type: 'password', username: 'anonymous', password: '' });
  expect(tokenRes.status).toBe(200);
  const token = (await tokenRes.json()) as { access_token: string; UUID: string };
  const bearer = { authorization: `Bearer ${token.access_token}` };

  const nearest = await fetch(url('/venue-api/api/nearest?lat=50.06&lng=19.94'), { headers: bearer });
  expect(nearest.status).toBe(200);
  const venues = (await nearest.json()) as { id: string }[];
  expect(venues[0]?.id).toBe(DEMO.venues[0]!.id);

  const ws = await openSocket(`ws://127.0.0.1:${port}/ordering-api/ws`, token.access_token);
  expect(await ws.next('HELLO', frameTimeoutMs)).toMatchObject({ seq: 0, payload: { userId: token.UUID } });

  const orderRes = await fetch(url('/ordering-api/api/order/new'), {
    method: 'POST',
    headers: { ...bearer, 'content-type': 'application/json' },
    body: JSON.stringify({
      orderType: 'TAKE_AWAY',
      buckets: [{ venue: DEMO.venues[0]!.id, lines: [{ productId: 'zurek', quantity: 1 }] }],
    }),
  });
  expect(orderRes.status).toBe(200);
  const { orderId } = (await orderRes.json()) as { orderId: string };
  expect(await ws.next('ORDER_CHANGE', frameTimeoutMs)).toMatchObject({ payload: { id: orderId, status: 'NEW' } });
  ws.close();
}

/**
 * The WAL is checkpointed on its worker thread inside the binary (src/db/checkpointer.ts), which loads the
 * extracted better-sqlite3 addon itself: the box's /metrics (a staff token) counts checkpoints and failures. A
 * checkpoint comes once the WAL is idle after a write (src/db/checkpoint.ts): one after the start, and one more
 * after a token is written.
 */
export async function checkpointsOnItsWorker(port: number, timeoutMs = 10_000): Promise<void> {
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;
  const staffToken = async (): Promise<string> => {
    const tokenRes = await requestToken(
      { url },
      { grant_type: 'password', username: 'kelner', password: 'kelner-demo-1' },
    );
    expect(tokenRes.status).toBe(200);
    return ((await tokenRes.json()) as { access_token: string }).access_token;
  };
  const staff = await staffToken();
  const value = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  let text = '';
  const checkpoints = () => value(text, 'venue_box_wal_checkpoint_duration_seconds_count');
  const waitFor = async (atLeast: number): Promise<void> => {
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      text = await (await fetch(url('/metrics'), { headers: { authorization: `Bearer ${staff}` } })).text();
      if (checkpoints() >= atLeast) return;
    }
  };
  await waitFor(1);
  const first = checkpoints();
  expect(first).toBeGreaterThanOrEqual(1);
  await staffToken(); // a refresh token written: the WAL has something new to copy back
  await waitFor(first + 1);
  expect(checkpoints()).toBeGreaterThan(first);
  expect(value(text, 'venue_box_wal_checkpoint_failures_total')).toBe(0);
}
