import { expect, test } from 'vitest';
import pino from 'pino';
import { createRuntime, restartDelay, type Service, serviceOf } from './runtime.js';

/** A logger that keeps every record, to look at what the runtime said. */
function memoryLog() {
  const records: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'debug' },
    { write: (line: string) => void records.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { log, records, said: (msg: string) => records.filter((r) => r.msg === msg) };
}

/** A service that records its calls in `calls`, and whose run() can be failed from outside. */
function recorded(name: string, calls: string[], over: Partial<Service> = {}) {
  let fail: ((err: Error) => void) | undefined;
  let stopped: (() => void) | undefined;
  let runs = 0;
  const service: Service = {
    run: () => {
      runs++;
      calls.push(`run ${name}`);
      return new Promise<void>((resolve, reject) => {
        stopped = resolve;
        fail = reject;
      });
    },
    drain: () => void calls.push(`drain ${name}`),
    stop: () => {
      calls.push(`stop ${name}`);
      stopped?.();
    },
    ...over,
  };
  return { service, fail: (err: Error) => fail?.(err), runs: () => runs };
}

const until = async (check: () => boolean, ms = 2000) => {
  for (const end = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 5))) {
    if (Date.now() > end) throw new Error('timed out');
  }
};

test('starts in the order given, each after the one before is ready; drains and stops in reverse', async () => {
  const calls: string[] = [];
  const { log } = memoryLog();
  const runtime = createRuntime({ log });
  const a = recorded('a', calls);
  const b = recorded('b', calls);
  let bReady!: () => void;
  const c = recorded('c', calls);
  const started = runtime.start([
    { name: 'a', service: a.service, policy: 'fatal' },
    { name: 'b', service: b.service, policy: 'fatal', ready: () => new Promise((r) => (bReady = r)) },
    { name: 'c', service: c.service, policy: 'restart' },
  ]);
  await until(() => calls.length === 2);
  expect(calls).toEqual(['run a', 'run b']);
  bReady();
  await started;
  expect(calls).toEqual(['run a', 'run b', 'run c']);
  await runtime.stop();
  expect(calls.slice(3)).toEqual(['drain c', 'stop c', 'drain b', 'stop b', 'drain a', 'stop a']);
  // Once, however often asked.
  await runtime.stop();
  expect(calls).toHaveLength(9);
});

test('a part that does not finish by its deadline is named in the log, and the others still stop', async () => {
  const calls: string[] = [];
  const { log, said } = memoryLog();
  const runtime = createRuntime({ log, deadlineMs: 50 });
  const hung = recorded('hung', calls, { drain: () => new Promise<void>(() => {}) });
  const after = recorded('after', calls);
  await runtime.start([
    { name: 'first', service: after.service, policy: 'fatal' },
    { name: 'hung part', service: hung.service, policy: 'fatal' },
  ]);
  await runtime.stop();
  expect(said('service did not finish in time: going on without it')).toMatchObject([
    { service: 'hung part', phase: 'drain', deadlineMs: 50 },
  ]);
  expect(calls).toContain('stop hung');
  expect(calls.at(-1)).toBe('stop after');
});

test("'restart': a run() that rejects is logged and run again after a backoff that doubles", async () => {
  const calls: string[] = [];
  const { log, said } = memoryLog();
  const restarts: string[] = [];
  const runtime = createRuntime({ log, backoff: { minMs: 20, maxMs: 1000 }, onRestart: (n) => restarts.push(n) });
  const flaky = recorded('flaky', calls);
  await runtime.start([{ name: 'flaky', service: flaky.service, policy: 'restart' }]);
  const failedAt = Date.now();
  flaky.fail(new Error('lost the line'));
  await until(() => flaky.runs() === 2);
  expect(Date.now() - failedAt).toBeGreaterThanOrEqual(15);
  flaky.fail(new Error('lost it again'));
  await until(() => flaky.runs() === 3);
  expect(said('service failed: restarting it')).toMatchObject([
    { service: 'flaky', attempt: 1, retryInMs: 20, err: { message: 'lost the line' } },
    { service: 'flaky', attempt: 2, retryInMs: 40, err: { message: 'lost it again' } },
  ]);
  expect(restarts).toEqual(['flaky', 'flaky']);
  expect(runtime.failure()).toBeUndefined();
  await runtime.stop();
  expect([
    restartDelay(1, { minMs: 1000, maxMs: 60_000 }),
    restartDelay(3, { minMs: 1000, maxMs: 60_000 }),
    restartDelay(40, { minMs: 1000, maxMs: 60_000 }),
  ]).toEqual([1000, 4000, 60_000]);
});

test("'restart': stopping during the backoff stops at once, without another run", async () => {
  const calls: string[] = [];
  const { log } = memoryLog();
  const runtime = createRuntime({ log, backoff: { minMs: 60_000, maxMs: 60_000 } });
  const flaky = recorded('flaky', calls);
  await runtime.start([{ name: 'flaky', service: flaky.service, policy: 'restart' }]);
  flaky.fail(new Error('down'));
  await new Promise((r) => setTimeout(r, 10));
  const at = Date.now();
  await runtime.stop();
  expect(Date.now() - at).toBeLessThan(1000);
  expect(flaky.runs()).toBe(1);
});

test("'fatal': a failed run() marks the runtime failed and calls the exit hook once", async () => {
  const calls: string[] = [];
  const { log, said } = memoryLog();
  const exits: string[] = [];
  const runtime = createRuntime({ log, onFatal: (f) => exits.push(f.name) });
  const queue = recorded('queue', calls);
  const other = recorded('other', calls);
  await runtime.start([
    { name: 'command queue', service: queue.service, policy: 'fatal' },
    { name: 'other', service: other.service, policy: 'fatal' },
  ]);
  expect(runtime.failure()).toBeUndefined();
  queue.fail(new Error('disk gone'));
  await until(() => exits.length > 0);
  expect(exits).toEqual(['command queue']);
  expect(runtime.failure()).toMatchObject({ name: 'command queue', err: { message: 'disk gone' } });
  expect(said('a service failed: the process reports not ready and stops')).toHaveLength(1);
  expect(queue.runs()).toBe(1);
  await runtime.stop();
  expect(exits).toHaveLength(1);
});

test('a run() that ends without being stopped is a failure too', async () => {
  const { log } = memoryLog();
  const exits: string[] = [];
  const runtime = createRuntime({ log, onFatal: (f) => exits.push(String((f.err as Error).message)) });
  let end!: () => void;
  await runtime.start([
    { name: 'loop', policy: 'fatal', service: { run: () => new Promise((r) => (end = r)), stop() {} } },
  ]);
  end();
  await until(() => exits.length > 0);
  expect(exits).toEqual(['loop ended without being stopped']);
  await runtime.stop();
});

test('a service that fails before it is ready fails the start, and what started is stopped', async () => {
  const calls: string[] = [];
  const { log } = memoryLog();
  const exits: string[] = [];
  const runtime = createRuntime({ log, onFatal: (f) => exits.push(f.name) });
  const first = recorded('first', calls);
  const listener: Service = { run: () => Promise.reject(new Error('port in use')), stop() {} };
  await expect(
    runtime.start([
      { name: 'first', service: first.service, policy: 'fatal' },
      { name: 'http', service: listener, policy: 'fatal', ready: () => new Promise(() => {}) },
    ]),
  ).rejects.toThrow('port in use');
  expect(calls).toEqual(['run first', 'drain first', 'stop first']);
  // A start that failed is the caller's error to report, not a fatal failure of a running process.
  expect(exits).toEqual([]);
});

test('a part whose start throws at once fails the start too, though it names no ready of its own', async () => {
  const calls: string[] = [];
  const { log } = memoryLog();
  const runtime = createRuntime({ log });
  const first = recorded('first', calls);
  const spooler = serviceOf({
    start: () => {
      throw new Error('SQLITE_IOERR: disk I/O error');
    },
  });
  const next = recorded('next', calls);
  await expect(
    runtime.start([
      { name: 'first', service: first.service, policy: 'fatal' },
      { name: 'spooler', service: spooler, policy: 'fatal' },
      { name: 'next', service: next.service, policy: 'fatal' },
    ]),
  ).rejects.toThrow('SQLITE_IOERR');
  // The part after it never ran; the one before it was stopped.
  expect(calls).toEqual(['run first', 'drain first', 'stop first']);
});

test('a stop() that never ends is left behind at its deadline: stopping ends, the parts before it stop', async () => {
  const calls: string[] = [];
  const { log, said } = memoryLog();
  const runtime = createRuntime({ log, deadlineMs: 50 });
  const storage = recorded('storage', calls);
  const stuck = serviceOf({ stop: () => new Promise<void>(() => {}) });
  await runtime.start([
    { name: 'storage', service: storage.service, policy: 'fatal' },
    { name: 'stuck', service: stuck, policy: 'fatal' },
  ]);
  const stopping = runtime.stop().then(() => 'stopped');
  const timeout = new Promise((r) => setTimeout(() => r('still stopping'), 2000));
  expect(await Promise.race([stopping, timeout])).toBe('stopped');
  expect(said('service did not finish in time: going on without it')).toMatchObject([
    { service: 'stuck', phase: 'stop' },
  ]);
  expect(calls.at(-1)).toBe('stop storage');
});

test('serviceOf: run() starts the part and lasts until stop()', async () => {
  const calls: string[] = [];
  const service = serviceOf({
    start: () => void calls.push('start'),
    drain: () => void calls.push('drain'),
    stop: () => void calls.push('stop'),
  });
  let done = false;
  const running = service.run().then(() => (done = true));
  await new Promise((r) => setTimeout(r, 10));
  expect([calls, done]).toEqual([['start'], false]);
  await service.drain!();
  await service.stop();
  await running;
  expect([calls, done]).toEqual([['start', 'drain', 'stop'], true]);
});
