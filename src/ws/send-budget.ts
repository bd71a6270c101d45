/**
 * The bytes waiting in sockets' send buffers (uWS backpressure), per socket and in total.
 *
 * Kept cheaply: a socket's figure is set after each send and each drain (uWS's `getBufferedAmount()`), so the
 * total moves by the difference and nothing iterates all sockets per frame. Only sockets holding bytes are in
 * `lagging`, and only they are looked at, and only when the total is over budget.
 */
export interface Buffered {
  buffered: number;
}

export interface SendBudget<T extends Buffered> {
  /** Records a socket's buffered bytes; true when the socket itself is over its cap. */
  set(entry: T, bytes: number): boolean;
  /** A closed socket: its bytes no longer count (uWS frees them within its close timeout). */
  remove(entry: T): void;
  /** The sockets to close so the total fits the budget again: the largest first. */
  overBudget(): T[];
  total(): number;
}

export function createSendBudget<T extends Buffered>(maxTotal: number, maxPerSocket: number): SendBudget<T> {
  let total = 0;
  const lagging = new Set<T>();

  const set = (entry: T, bytes: number): boolean => {
    total += bytes - entry.buffered;
    entry.buffered = bytes;
    if (bytes > 0) lagging.add(entry);
    else lagging.delete(entry);
    return bytes > maxPerSocket;
  };

  return {
    set,
    remove(entry) {
      set(entry, 0);
    },
    overBudget() {
      if (total <= maxTotal) return [];
      const shed: T[] = [];
      let left = total;
      for (const e of [...lagging].sort((a, b) => b.buffered - a.buffered)) {
        if (left <= maxTotal) break;
        shed.push(e);
        left -= e.buffered;
      }
      return shed;
    },
    total: () => total,
  };
}
