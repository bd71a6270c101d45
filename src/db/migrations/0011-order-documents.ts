import type { Migration } from '../migrate.js';

/** order_users.roles ('A,B') as the text of a JSON array, quotes and backslashes escaped. */
const ROLES = `'["' || replace(replace(replace(u.roles, '\\', '\\\\'), '"', '\\"'), ',', '","') || '"]'`;

/**
 * An order is one row: its buckets' venues, its lines and its users move from their own tables into JSON columns
 * of `orders` (docs/performance.md "What a `new` writes"). A command reads and writes the order whole, so the
 * three tables cost every `new` nine b-tree pages in the WAL (each table, its key and its indexes) and every
 * command four SELECTs to rebuild the order it had just written. What was read across orders keeps an index:
 * the claim codes of open orders (`orders_open_claim`, on the order: a code is shared by its buckets) and the
 * orders of a user (`user_orders`, one b-tree: its key is the index); the staff list's index becomes ascending.
 * Rows keep their meaning and order: venues in bucket position, lines in position, users as they were listed.
 */
export const migration0011: Migration = {
  version: 11,
  name: 'order-documents',
  up: `
ALTER TABLE orders ADD COLUMN venues_json TEXT NOT NULL DEFAULT '[]';
ALTER TABLE orders ADD COLUMN lines_json TEXT NOT NULL DEFAULT '[]';
ALTER TABLE orders ADD COLUMN users_json TEXT NOT NULL DEFAULT '[]';

UPDATE orders SET
  venues_json = (SELECT json_group_array(b.venue_id ORDER BY b.position) FROM order_buckets b
    WHERE b.tenant_id = orders.tenant_id AND b.order_id = orders.id),
  lines_json = (SELECT json_group_array(json_object('id', l.id, 'venue_id', l.venue_id, 'creator', l.creator,
      'product_id', l.product_id, 'quantity', l.quantity, 'price_minor', l.price_minor, 'status', l.status,
      'product_json', l.product_json, 'created_ms', l.created_ms, 'updated_ms', l.updated_ms, 'round', l.round,
      'note', l.note) ORDER BY l.position)
    FROM order_lines l WHERE l.tenant_id = orders.tenant_id AND l.order_id = orders.id),
  -- roles were kept as 'A,B' (ROLES above); a text that still is no JSON array stays one role.
  users_json = (SELECT json_group_array(json_object('userId', u.user_id, 'roles',
      CASE WHEN json_valid(${ROLES}) THEN json(${ROLES}) ELSE json_array(u.roles) END) ORDER BY u.rowid)
    FROM order_users u WHERE u.tenant_id = orders.tenant_id AND u.order_id = orders.id);

-- The orders of a user, open ones first: a customer's open orders counted (docs/orders.md "Order limits") and
-- whether any order lists a user (the token sweep), from this b-tree alone.
CREATE TABLE user_orders (
  tenant_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  open INTEGER NOT NULL,
  order_id TEXT NOT NULL,
  PRIMARY KEY (tenant_id, user_id, open, order_id)
) STRICT, WITHOUT ROWID;
INSERT INTO user_orders (tenant_id, user_id, open, order_id) SELECT tenant_id, user_id, open, order_id FROM order_users;

-- A claim code is unique among a venue's open orders: the new order's code is drawn until no open order of its
-- venues holds it.
CREATE INDEX orders_open_claim ON orders (tenant_id, claim_code) WHERE closed = 0;

-- The staff list, newest first, read backwards: new orders go at the end of the index, where SQLite appends to
-- its last page, instead of at its start, where a full page is split and its neighbours rewritten (three leaves
-- and their parent in the WAL, every few orders).
DROP INDEX orders_newest;
CREATE INDEX orders_newest ON orders (tenant_id, created_ms, id);

DROP TABLE order_users;
DROP TABLE order_lines;
DROP TABLE order_buckets;
`,
};
