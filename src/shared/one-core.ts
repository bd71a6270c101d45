import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';

/**
 * On a box that may run on one core only (a single-core board, or a process pinned to one), V8's concurrent
 * marking is turned off: its threads then share that core with the event loop, and the event loop's own marking
 * steps waited for them, 9-16 ms at a time under load (docs/operations.md "Garbage collection on one core").
 * Marking then runs in small steps on the event loop. With more cores the default stays. Returns whether it did.
 */
export function markOnTheEventLoopOnOneCore(cores = availableParallelism()): boolean {
  if (cores > 1) return false;
  setFlagsFromString('--no-concurrent-marking');
  return true;
}
