import { AppError } from '../../../shared/errors.js';

/** One admitted batch: it holds a slot of the central until released, and its device's slot once claimed. */
export interface Admission {
  /**
   * Claims the device's one slot; a 429 AppError thrown when a batch of that device is in flight. Called only
   * after the batch is authenticated, so a request that merely names a device never holds that device's slot.
   */
  claimDevice(deviceKey: string): void;
  /** Frees both slots; a second call changes nothing. */
  release(): void;
}

/**
 * Admission for batches, in two steps: `admit()` takes one of at most `max` central slots before any database
 * work (the pool keeps two connections for reads), then, once the batch is authenticated, `claimDevice` takes
 * the device's only slot (docs/sync.md "Sync to the central node": one request in flight per box; a second one would only wait on the first
 * one's row lock). Every refusal is a 429 with a jittered Retry-After, so a hundred boxes reconnecting at once
 * spread out instead of queueing on the pool until they time out.
 */
export function createIngestLimiter(max: number, random: () => number = Math.random) {
  let active = 0;
  const devices = new Set<string>();
  let onIdle: (() => void) | undefined;

  const busy = (message: string): AppError =>
    AppError.of('tooManyRequests', message, [], {
      // 1..5 s, jittered, so refused boxes do not come back in one wave.
      'Retry-After': String(1 + Math.floor(random() * 5)),
    });

  return {
    /** A central slot, or a 429 AppError thrown. */
    admit(): Admission {
      if (active >= max) throw busy('the central is busy; retry after Retry-After seconds');
      active += 1;
      let device: string | undefined;
      let released = false;
      return {
        claimDevice(deviceKey: string): void {
          if (released || device !== undefined) throw new Error('claimDevice: called twice or after release');
          if (devices.has(deviceKey)) throw busy('a batch of this device is in flight; send one at a time');
          devices.add(deviceKey);
          device = deviceKey;
        },
        release(): void {
          if (released) return;
          released = true;
          active -= 1;
          if (device !== undefined) devices.delete(device);
          if (active === 0) onIdle?.();
        },
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
