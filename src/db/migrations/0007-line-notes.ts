import type { Migration } from '../migrate.js';

/**
 * A kitchen note on an order line (`extra.note` of a line sent with `new` or `append`, at most 140
 * characters): shown in the Order and printed under the line on the kitchen ticket (docs/orders.md "Kitchen tickets").
 * Null for lines without one, and for every line written before this migration.
 */
export const migration0007: Migration = {
  version: 7,
  name: 'line-notes',
  up: `
ALTER TABLE order_lines ADD COLUMN note TEXT;
`,
};
