import { AppError } from '../../../shared/errors.js';

/**
 * Admission for batches: at most `max` ingest transactions at once (the pool keeps two connections for
 * reads), and one batch in flight per device (SYNC.md: one request in flight per box; a second one would
 * only wait on the first one's row lock). Everything else is a 429 with a jittered Retry-After, so a
 * hundred boxes reconnecting at once spread out instead of queueing on the pool until they time out.
 */
export function createIngestLimiter(max: number, random: () => number = Math.random) {
  let active = 0;
  const devices = new Set<string>();
  let onIdle: (() => void) | undefined;

  const busy = (message: string): AppError =>
    new AppError(429, message, [{ code: 'tooManyRequests', message, args: [] }], {
      // 1..5 s, jittered, so refused boxes do not come back in one wave.
      'Retry-After': String(1 + Math.floor(random() * 5)),
    });

  return {
    /** A release function, or a 429 AppError thrown. */
    acquire(deviceKey: string): () => void {
      if (devices.has(deviceKey)) throw busy('a batch of this device is in flight; send one at a time');
      if (active >= max) throw busy('the central is busy; retry after Retry-After seconds');
      active += 1;
      devices.add(deviceKey);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        active -= 1;
        devices.delete(deviceKey);
        if (active === 0) onIdle?.();
      };
    },
    get active(): number {
      return active;
    },
    /** Resolves once no batch is in flight (shutdown waits here before closing the pool). */
    idle(): Promise<void> {
      if (active === 0) return Promise.resolve();
      return new Promise((resolve) => {
        onIdle = resolve;
      });
    },
  };
}

export type IngestLimiter = ReturnType<typeof createIngestLimiter>;
