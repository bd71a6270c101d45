import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { afterEach, expect, test } from 'vitest';
import { jsonLogs, startTestBox, type TestBox } from './support/box.js';

// docs/performance.md "V8's threads on one core": a box on one core runs node's and V8's own threads SCHED_IDLE.
const SCHED_OTHER = 0;
const SCHED_IDLE = 5;

/** Each thread's scheduling policy (field 41 of /proc/PID/task/TID/stat), by thread id. */
function policies(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The fields after the command name, which sits in parentheses: the policy is the 39th of them.
    out.set(tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]));
  }
  return out;
}

let box: TestBox | undefined;
afterEach(async () => {
  await box?.stop();
  box = undefined;
});

test("pinned to one core, the box's event loop and libuv's pool (the WAL's fsync) stay ordinary; node's and V8's threads are idle", async () => {
  box = await startTestBox({ cores: '0' });
  // A token answers after an fsync of the WAL on libuv's pool: the pool's threads exist from here on.
  await box.token();
  const pid = box.proc.pid!;
  const policy = policies(pid);
  expect(policy.get(pid)).toBe(SCHED_OTHER);
  const idle = [...policy.values()].filter((p) => p === SCHED_IDLE).length;
  const logged = jsonLogs(box).find((l) => /SCHED_IDLE/.test(String(l.msg)));
  expect(logged?.threads).toBe(idle);
  // V8's 4 workers and node's platform thread at least.
  expect(idle).toBeGreaterThanOrEqual(5);
  // The event loop and libuv's 4 threads at least.
  expect([...policy.values()].filter((p) => p === SCHED_OTHER).length).toBeGreaterThanOrEqual(5);
});

test.skipIf(availableParallelism() < 2)('with more cores every thread keeps the ordinary policy', async () => {
  box = await startTestBox();
  await box.token();
  expect(new Set(policies(box.proc.pid!).values())).toEqual(new Set([SCHED_OTHER]));
  expect(box.logs.some((l) => /SCHED_IDLE/.test(l))).toBe(false);
});
