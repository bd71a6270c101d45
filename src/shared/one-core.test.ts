import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { expect, test, vi } from 'vitest';
import type { Logger } from '../log.js';
import { GC_HELPER_FLAGS, gcOnTheEventLoopOnOneCore, idleNodeThreadsOnOneCore, tuneForOneCore } from './one-core.js';

test("V8's collection helpers are turned off on one core only; with more the defaults stay", () => {
  expect(gcOnTheEventLoopOnOneCore(2)).toBe(false);
  expect(gcOnTheEventLoopOnOneCore(4)).toBe(false);
  expect(gcOnTheEventLoopOnOneCore(1)).toBe(true);
});

test("the flags it sets are V8's (setFlagsFromString only prints a warning for an unknown one)", () => {
  const known = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
  for (const flag of GC_HELPER_FLAGS) expect(known).toMatch(new RegExp(`^\\s+--${flag} `, 'm'));
});

test("on one core the threads noted at start but the event loop's are made idle, those still alive; with more cores none", () => {
  const idle: number[] = [];
  const now = readdirSync('/proc/self/task').map(Number);
  const others = now.filter((tid) => tid !== process.pid);
  expect(others.length).toBeGreaterThan(0);
  // A thread id that no longer exists (ids only grow until they wrap, far past this).
  const gone = Math.max(...now) + 1_000_000;
  expect(idleNodeThreadsOnOneCore(2, (tid) => idle.push(tid), [...now, gone])).toBe(0);
  expect(idle).toEqual([]);
  expect(idleNodeThreadsOnOneCore(1, (tid) => idle.push(tid), [...now, gone])).toBe(others.length);
  expect(idle.sort()).toEqual(others.sort());
});

test('a box where chrt fails says so and goes on', () => {
  const log = { info: vi.fn(), warn: vi.fn() };
  const refused = () => {
    throw new Error('chrt: not found');
  };
  expect(() => tuneForOneCore(log as unknown as Logger, 1, refused)).not.toThrow();
  expect(log.warn).toHaveBeenCalledTimes(1);
  expect(log.warn.mock.calls[0]![1]).toMatch(/keep their scheduling policy/);
});
