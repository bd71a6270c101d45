import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { type CentralLoopDeps, createCentralLoop, retryDelay } from './central-loop.js';
import { CentralError } from './client.js';
import type { Device } from './enrolment/device.js';

const device = { central: 'http://central', deviceId: 'd', tenant: 't', venue: 'v', keyId: 'k' } as Device;
const options = { retryMinMs: 1000, retryMaxMs: 60_000, enrolPollMs: 5000, requestTimeoutMs: 30_000 };

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A loop whose steps are answered by `answers` in turn (a number: the wait asked for; an Error: thrown). */
function harness(answers: (number | undefined | Error)[], more: Partial<CentralLoopDeps> = {}) {
  const steps: number[] = [];
  const waits: number[] = [];
  const loop = createCentralLoop({
    options,
    loadDevice: () => device,
    random: () => 1,
    step: async () => {
      steps.push(Date.now());
      const next = answers.length > 0 ? answers.shift() : undefined;
      if (next instanceof Error) throw next;
      return next;
    },
    failed: (_err, ms) => waits.push(ms),
    ...more,
  });
  const run = loop.run();
  return { loop, run, steps, waits };
}

const unreachable = () => new CentralError(0, 'central unreachable (ECONNREFUSED)');

test('the first retry waits retryMinMs, then the step doubles up to retryMaxMs; a success starts again', async () => {
  const failures = Array.from({ length: 8 }, unreachable);
  const { loop, steps, waits } = harness([...failures, 0, unreachable()]);
  await vi.advanceTimersByTimeAsync(200_000);
  expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 1000]);
  expect(steps[1]! - steps[0]!).toBe(1000);
  await loop.stop();
});

test("a busy central's Retry-After is not a failed attempt: the backoff after it starts from the first step", async () => {
  const busy = () => new CentralError(429, 'busy', undefined, 2);
  const { loop, waits } = harness([...Array.from({ length: 6 }, busy), unreachable(), unreachable()]);
  await vi.advanceTimersByTimeAsync(60_000);
  expect(waits).toEqual([2000, 2000, 2000, 2000, 2000, 2000, 1000, 2000]);
  await loop.stop();
});

test('the jitter stays between retryMinMs and the step: never below retryMinMs', () => {
  const err = unreachable();
  expect(retryDelay(err, 1, options, () => 0)).toBe(1000);
  expect(retryDelay(err, 1, options, () => 0.99)).toBe(1000);
  expect(retryDelay(err, 3, options, () => 0)).toBe(1000);
  expect(retryDelay(err, 3, options, () => 0.5)).toBe(2500);
  expect(retryDelay(err, 40, options, () => 1)).toBe(60_000);
});

test('a 429 or 503 Retry-After wins, held between retryMinMs and retryMaxMs; without one the backoff applies', () => {
  expect(retryDelay(new CentralError(429, 'busy', undefined, 7), 5, options)).toBe(7000);
  expect(retryDelay(new CentralError(503, 'stopping', undefined, 0), 1, options)).toBe(1000);
  expect(retryDelay(new CentralError(503, 'stopping', undefined, 3600), 1, options)).toBe(60_000);
  expect(retryDelay(new CentralError(503, 'stopping'), 1, options, () => 1)).toBe(1000);
  // Retry-After on another status is not the central's "come back later".
  expect(retryDelay(new CentralError(500, 'oops', undefined, 7), 1, options, () => 1)).toBe(1000);
});

test('a refused device (401, 403) or an upgrade needed (426) waits retryMaxMs from the first failure', async () => {
  for (const status of [401, 403, 426]) expect(retryDelay(new CentralError(status, 'no'), 1, options)).toBe(60_000);
  // A request stamped on a clock set since the last hello is no refusal: the next hello mends it (docs/sync.md
  // "Signed requests"), so it backs off as a failure.
  const stale = { message: 'stale', codes: [{ code: 'requestStale', message: 'stale', args: [] }] };
  expect(retryDelay(new CentralError(401, 'stale', stale), 1, options, () => 0)).toBe(1000);
  const { loop, steps } = harness([new CentralError(401, 'central answered 401: unauthorized'), 0]);
  await vi.advanceTimersByTimeAsync(59_999);
  expect(steps).toHaveLength(1);
  await vi.advanceTimersByTimeAsync(1);
  expect(steps).toHaveLength(2);
  await loop.stop();
});

test('a refused device enrolled again is tried within enrolPollMs, under its new identity, not after retryMaxMs', async () => {
  let current = device;
  const seen: string[] = [];
  const { loop } = harness([], {
    loadDevice: () => current,
    step: async ({ device: d }) => {
      seen.push(d.deviceId);
      if (seen.length === 1) throw new CentralError(401, 'central answered 401: unauthorized');
      return undefined;
    },
  });
  // The same device file (a copy of the same identity read again): the refusal's wait holds.
  await vi.advanceTimersByTimeAsync(20_000);
  current = { ...device };
  await vi.advanceTimersByTimeAsync(10_000);
  expect(seen).toEqual(['d']);
  // `sync enrol --again` wrote a new device: the next look (enrolPollMs) ends the wait.
  current = { ...device, deviceId: 'd2', keyId: 'k2' };
  await vi.advanceTimersByTimeAsync(5000);
  expect(seen).toEqual(['d', 'd2']);
  await loop.stop();
});

test('not enrolled: the device file is looked for every enrolPollMs, and the step runs once it is there', async () => {
  let enrolled: Device | undefined;
  let looks = 0;
  const { loop, steps } = harness([undefined], {
    loadDevice: () => {
      looks++;
      return enrolled;
    },
  });
  await vi.advanceTimersByTimeAsync(14_999);
  expect(looks).toBe(3);
  expect(steps).toEqual([]);
  enrolled = device;
  await vi.advanceTimersByTimeAsync(1);
  expect(steps).toHaveLength(1);
  await loop.stop();
});

test('wake() runs the step early (within wakeDelayMs), but never cuts a backoff short', async () => {
  const { loop, steps } = harness([60_000, unreachable(), undefined], { options: { ...options, wakeDelayMs: 100 } });
  await vi.advanceTimersByTimeAsync(0);
  expect(steps).toHaveLength(1);
  loop.wake();
  await vi.advanceTimersByTimeAsync(100);
  expect(steps).toHaveLength(2); // and it failed: a 1000 ms backoff
  loop.wake();
  await vi.advanceTimersByTimeAsync(999);
  expect(steps).toHaveLength(2);
  await vi.advanceTimersByTimeAsync(1);
  expect(steps).toHaveLength(3);
  // The step asked to wait until woken: only wake() runs it again.
  await vi.advanceTimersByTimeAsync(3_600_000);
  expect(steps).toHaveLength(3);
  loop.wake();
  await vi.advanceTimersByTimeAsync(100);
  expect(steps).toHaveLength(4);
  await loop.stop();
});

test('a wake while the step runs runs it again after it', async () => {
  let release: (() => void) | undefined;
  let calls = 0;
  const loop = createCentralLoop({
    options,
    loadDevice: () => device,
    failed: () => undefined,
    step: async () => {
      calls++;
      if (calls === 1)
        await new Promise<void>((r) => {
          release = r;
        });
      return undefined;
    },
  });
  void loop.run();
  await vi.advanceTimersByTimeAsync(0);
  loop.wake();
  release!();
  await vi.advanceTimersByTimeAsync(0);
  expect(calls).toBe(2);
  await loop.stop();
});

test("a step that throws a bug ends run() with it; the central's errors and the step's own failures do not", async () => {
  const bug = new TypeError("Cannot read properties of undefined (reading 'seq')");
  class Mine extends Error {}
  const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
  const { run, steps, waits } = harness([unreachable(), new Mine('step failure'), full, bug], {
    retryable: (e) => e instanceof Mine,
  });
  const outcome = run.then(
    () => 'resolved',
    (err: unknown) => err,
  );
  await vi.advanceTimersByTimeAsync(10_000);
  expect(await outcome).toBe(bug);
  expect(steps).toHaveLength(4);
  expect(waits).toHaveLength(3);
});

test('stop() ends the wait and the request in flight; run() then resolves', async () => {
  let signal: AbortSignal | undefined;
  let timeout = 0;
  const loop = createCentralLoop({
    options,
    loadDevice: () => device,
    failed: () => undefined,
    step: ({ client }) => {
      signal = client.signal;
      timeout = client.requestTimeoutMs;
      return new Promise((_resolve, reject) => client.signal!.addEventListener('abort', () => reject(unreachable())));
    },
  });
  const run = loop.run();
  await vi.advanceTimersByTimeAsync(0);
  expect(timeout).toBe(30_000);
  await loop.stop();
  expect(signal!.aborted).toBe(true);
  await expect(run).resolves.toBeUndefined();
});
