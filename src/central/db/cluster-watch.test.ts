import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, expect, test } from 'vitest';
import { type Cluster, watchCluster } from './cluster-watch.js';

// The watch over a fake postmaster: `sleep`, started and killed as PostgreSQL would be (the real one:
// test/central-embedded-db.test.ts).

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** A cluster whose starts succeed while `failing` is 0 and fail (the process exits at once) while it is not. */
function fakeCluster(failing = 0) {
  let current: ChildProcess | undefined;
  const state = { failing, starts: 0 };
  const cluster: Cluster = {
    async start() {
      state.starts++;
      const failNow = state.failing > 0;
      if (failNow) state.failing--;
      current = spawn(failNow ? 'false' : 'sleep', failNow ? [] : ['60']);
      children.push(current);
      const child = current;
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', () => (failNow ? undefined : resolve()));
        child.once('exit', () => reject(new Error('exited before it was ready')));
      });
    },
    process: () => current,
    lastLines: () => 'FATAL: the last words',
  };
  return { cluster, state };
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((r) => child.once('exit', () => r()));
const until = async (what: () => boolean) => {
  while (!what()) await new Promise((r) => setTimeout(r, 5));
};

test('a postmaster that dies is down at once, started again after the backoff, and up again', async () => {
  const { cluster, state } = fakeCluster();
  await cluster.start();
  const watch = watchCluster(cluster, { restart: true, backoff: { minMs: 50, maxMs: 50 } });
  const first = cluster.process()!;
  first.kill('SIGKILL');
  await exited(first);
  expect(watch.up()).toBe(false);
  await until(() => watch.up());
  expect(state.starts).toBe(2);
  expect(cluster.process()).not.toBe(first);
  await watch.stop();
  expect(cluster.process()!.signalCode).toBe('SIGINT');
});

test('restarts that keep failing give up with exit 69 naming the last words; stop is at once then', async () => {
  const { cluster, state } = fakeCluster();
  await cluster.start();
  state.failing = 10;
  const watch = watchCluster(cluster, { restart: true, backoff: { minMs: 10, maxMs: 40 }, attempts: 3 });
  cluster.process()!.kill('SIGKILL');
  const err = await watch.failed.catch((e: unknown) => e as { exitCode: number; message: string });
  expect(err).toMatchObject({ exitCode: 69, message: expect.stringMatching(/3 attempts.*the last words/) });
  expect(state.starts).toBe(4);
  const asked = Date.now();
  await watch.stop();
  expect(Date.now() - asked).toBeLessThan(500);
});

test('stopped during the backoff: no start after it; a postmaster that ignores SIGINT is killed', async () => {
  const { cluster, state } = fakeCluster();
  await cluster.start();
  const watch = watchCluster(cluster, { restart: true, backoff: { minMs: 60_000, maxMs: 60_000 } });
  cluster.process()!.kill('SIGKILL');
  await exited(cluster.process()!);
  await watch.stop();
  expect(state.starts).toBe(1);

  // SIGINT ignored, as exec keeps it: deaf to the fast shutdown.
  const deaf = spawn('sh', ['-c', 'trap "" INT; echo ready; exec sleep 60']);
  children.push(deaf);
  await new Promise((r) => deaf.stdout.once('data', r));
  const watchDeaf = watchCluster(
    { start: async () => undefined, process: () => deaf, lastLines: () => '' },
    { restart: true, stopTimeoutMs: 100 },
  );
  await watchDeaf.stop();
  expect(deaf.signalCode).toBe('SIGKILL');
});
