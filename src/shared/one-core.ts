import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import type { Logger } from '../log.js';

/**
 * V8's helpers that a collection on the event loop hands work to and then waits for, turned off by these two
 * flags alone: setting all that `--single-threaded-gc` implies (parallel marking and compaction, concurrent
 * sweeping) at run time made V8 abort once, in a check of its marker as a cycle ended.
 */
export const GC_HELPER_FLAGS = ['concurrent-marking', 'parallel-scavenge'];

/**
 * On a box that may run on one core only (a single-core board, or a process pinned to one), V8 collects garbage
 * on the event loop alone. Its helper threads would share that core with it, and the event loop waited for them:
 * for concurrent marking 9-16 ms at a time under load, and for a scavenge's parallel tasks up to 31 ms once those
 * threads ran SCHED_IDLE (below) while the WAL checkpointer's thread held the core (docs/operations.md "V8's threads
 * on one core"). With more cores the defaults stay. Returns whether it did.
 */
export function gcOnTheEventLoopOnOneCore(cores = availableParallelism()): boolean {
  if (cores > 1) return false;
  for (const flag of GC_HELPER_FLAGS) setFlagsFromString(`--no-${flag}`);
  return true;
}

/** Sets one thread's scheduling policy to SCHED_IDLE (util-linux's `chrt`; Node has no call for it). */
export type MakeIdle = (tid: number) => void;
const chrtIdle: MakeIdle = (tid) => {
  execFileSync('chrt', ['--idle', '--pid', '0', String(tid)], { stdio: 'ignore' });
};

/** This process's threads now (none where there is no /proc: not Linux). */
function threadsNow(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number);
  } catch {
    return [];
  }
}

/**
 * The threads the process had when this module was first evaluated: node's and V8's own (V8's optimizing
 * compiler and garbage-collection helpers, node's platform timer thread, the one that would start an inspector).
 * src/main.ts imports this module first, before any code can queue work on libuv's thread pool, whose threads
 * (they sync the WAL) come later and are not among these.
 */
const THREADS_AT_START = threadsNow();

/**
 * On one core, node's and V8's own threads (THREADS_AT_START but the event loop's) become SCHED_IDLE. A compile on
 * one of them ran for 4-5 ms at a time, until the kernel's next tick, while the event loop's socket or timer waited
 * for the core; Linux lets a woken ordinary thread run at once ahead of a SCHED_IDLE one (docs/operations.md "V8's
 * threads on one core"). The event loop, libuv's pool and the WAL checkpointer's thread (src/db/checkpoint-worker.ts)
 * keep the ordinary policy. Lowering a thread's policy needs no privilege, and the box never raises it back.
 * Returns how many threads it changed: 0 with more cores; throws where `chrt` is missing or refused.
 */
export function idleNodeThreadsOnOneCore(
  cores = availableParallelism(),
  makeIdle: MakeIdle = chrtIdle,
  threads: readonly number[] = THREADS_AT_START,
): number {
  if (cores > 1) return 0;
  const alive = new Set(threadsNow());
  const others = threads.filter((tid) => tid !== process.pid && alive.has(tid));
  for (const tid of others) makeIdle(tid);
  return others.length;
}

/** Both of the above at the start of `serve`, before anything uses libuv's thread pool; says what it did. */
export function tuneForOneCore(log: Logger, cores = availableParallelism(), makeIdle: MakeIdle = chrtIdle): void {
  if (gcOnTheEventLoopOnOneCore(cores))
    log.info('one core: V8 collects garbage on the event loop, without its helper threads');
  try {
    const threads = idleNodeThreadsOnOneCore(cores, makeIdle);
    if (threads > 0)
      log.info({ threads }, "one core: node's and V8's own threads run SCHED_IDLE, behind the event loop");
  } catch (err) {
    log.warn({ err }, "one core: node's and V8's own threads keep their scheduling policy (chrt failed)");
  }
}
