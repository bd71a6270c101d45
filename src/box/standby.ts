import type { PrimarySide } from '../modules/standby/primary-side.js';
import { ProcessError } from '../shared/errors.js';
import type { Service } from '../shared/runtime.js';

/**
 * The primary's watch on its peer as a service (docs/operations.md "A standby box"): at start, and every few
 * seconds after, it asks the peer for its role and term. A peer that became the primary at a higher term (it
 * took over while this box was cut off or down) fences this box: the service fails, the box stops confirming
 * and exits with 75, and systemd starts it again, as the new primary's standby (its state says so now).
 */
export function standbyService(side: PrimarySide, tookOver: boolean): { service: Service; ready(): Promise<void> } {
  let stop: (() => void) | undefined;
  let probed!: () => void;
  const ready = new Promise<void>((r) => (probed = r));
  const service: Service = {
    async run() {
      // A box that has just taken over holds the newest term: its dead peer is asked once, not waited for.
      await side.probe(!tookOver);
      // Fenced before the port opens: the start fails, and no request reaches this box as a primary.
      const f = side.fenced();
      if (f) throw new ProcessError('tempFail', `fenced: ${f.message}; starting again as the standby`);
      probed();
      const ended = new Promise<void>((resolve, reject) => {
        stop = resolve;
        side.onFenced((f) =>
          reject(new ProcessError('tempFail', `fenced: ${f.message}; starting again as the standby`)),
        );
      });
      side.startProbing();
      await ended;
    },
    stop: () => stop?.(),
  };
  return { service, ready: () => ready };
}
