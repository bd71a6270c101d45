import type { Migration } from '../migrate.js';

/**
 * Whether the order a user is listed on is still open, on the user's row: a customer's `new` counts its open
 * orders (docs/orders.md "Order limits") from the index order_users_user alone, instead of looking up each of the
 * user's orders in the orders table (docs/performance.md "What a `new` reads"). The index takes the place of the
 * old one on (tenant_id, user_id), so a `new` writes no more pages than before; closing an order clears the flag
 * of its users in the same transaction.
 */
export const migration0009: Migration = {
  version: 9,
  name: 'open-order-users',
  up: `
ALTER TABLE order_users ADD COLUMN open INTEGER NOT NULL DEFAULT 1;
UPDATE order_users SET open = 0
  WHERE EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = order_users.tenant_id AND o.id = order_users.order_id AND o.closed = 1);
DROP INDEX order_users_user;
CREATE INDEX order_users_user ON order_users (tenant_id, user_id, open);
`,
};
