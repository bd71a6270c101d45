/**
 * Frames committed but not yet pushed, because the fsync that makes them durable is still in flight
 * (src/db/wal-sync.ts). A socket that opens meanwhile starts before the first of its stream's held frames and a
 * replay stops short of it: the push that follows the fsync then reaches that socket too, in seq order, and no
 * socket is told of an event that a power cut could still take back.
 */
export function createHeldFrames() {
  /** Stream key -> the seqs held, ascending (frames are held and released in commit order). */
  const held = new Map<string, number[]>();
  return {
    hold(key: string, seq: number): void {
      const seqs = held.get(key);
      if (seqs) seqs.push(seq);
      else held.set(key, [seq]);
    },
    release(key: string, seq: number): void {
      const seqs = held.get(key);
      if (!seqs) return;
      const i = seqs.indexOf(seq);
      if (i >= 0) seqs.splice(i, 1);
      if (seqs.length === 0) held.delete(key);
    },
    /** The highest seq of the stream a socket may be sent now: `end`, or the one before the first held frame. */
    limit(key: string, end: number): number {
      const first = held.get(key)?.[0];
      return first === undefined ? end : Math.min(end, first - 1);
    },
    size: (): number => held.size,
  };
}
