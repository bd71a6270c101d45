import { AppError } from '../../../shared/errors.js';

/**
 * Headquarters' heavy reads (reports, the dashboard, the order search) run at most `max` at a time in one central
 * process; more wait their turn in memory (holding no connection), up to `maxWaiting`; one more is a 429
 * `tooManyRequests` with Retry-After. Ingest keeps its own slots (POOL_SIZE - 2), so headquarters' reads take at
 * most two connections of the pool: a read user hammering the reports cannot stall the boxes' batches, or make
 * other requests time out waiting for a connection (docs/sync.md "HQ reports and order search").
 */
export function createReadSlots(max: number, maxWaiting: number, random: () => number = Math.random) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return {
    async run<T>(read: () => Promise<T>): Promise<T> {
      if (active >= max) {
        if (waiting.length >= maxWaiting) {
          throw AppError.of('tooManyRequests', 'headquarters reads are busy; retry after Retry-After seconds', [], {
            'Retry-After': String(1 + Math.floor(random() * 2)),
          });
        }
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else active += 1;
      try {
        return await read();
      } finally {
        // The slot passes to the next waiting read, or frees.
        const next = waiting.shift();
        if (next) next();
        else active -= 1;
      }
    },
    get active(): number {
      return active;
    },
    get waiting(): number {
      return waiting.length;
    },
  };
}
export type ReadSlots = ReturnType<typeof createReadSlots>;

/** The same service with every method run in a read slot. */
export function inReadSlots<S extends object>(slots: ReadSlots, service: S): S {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(service)) {
    wrapped[name] =
      typeof method === 'function' ? (...args: unknown[]) => slots.run(() => method.apply(service, args)) : method;
  }
  return wrapped as S;
}
