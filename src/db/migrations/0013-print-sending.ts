import type { Migration } from '../migrate.js';

/**
 * When a box began sending a print job to its printer (docs/printing.md "How printing behaves"): written, and held
 * by the standby, before the first byte goes out. A box that took over from a dead primary then knows which
 * queued tickets the dead one may already have printed, and does not print them a second time (they are marked
 * failed for staff to reprint if they did not come out).
 */
export const migration0013: Migration = {
  version: 13,
  name: 'print-sending',
  up: `ALTER TABLE print_jobs ADD COLUMN sending_ms INTEGER;`,
};
