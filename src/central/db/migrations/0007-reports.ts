/**
 * Headquarters' reports (docs/sync.md "HQ reports and order search"). `order_facts`: one row per order and venue
 * (an order with buckets of several venues has one row per venue, its revenue that venue's lines; `first_venue`
 * marks the first bucket's, the one row per order the order search reads). `order_product_facts`: what each
 * fact sold per product. The rollups (`sales_daily`, `sales_hourly`, `kitchen_daily`, `product_daily`,
 * `product_daily_tenant`) hold what the reports sum, by venue-local day: the projection adds a fact's share when
 * it writes the fact and subtracts that same share when it replaces it, so replays, later versions and a sale
 * turned CANCELLED keep them exact (src/central/modules/projections/facts-repo.ts). A kitchen maximum cannot be
 * subtracted: a row whose maximum was removed is marked -1 and recomputed from its facts in the same transaction.
 * Product names are each product's name as last sold. The contact search uses pg_trgm where the server has it.
 *
 * The backfill reads what the central holds: orders (the newest state), order_versions (when each order first
 * reached ORDERED and READY, from the command's confirmedAt) and the raw event that made each order's newest
 * state (its detail.contact); a venue's time zone is its document's `timeZone` when PostgreSQL knows the name,
 * else Europe/Warsaw. This is a copy of the projection's rules as they were when it shipped: never edit it.
 */
const SALE = `('ORDERED', 'READY', 'COMPLETED')`;

export const sql = `
CREATE TABLE order_facts (
  tenant_id text NOT NULL,
  order_id text NOT NULL,
  venue_id text NOT NULL,
  first_venue boolean NOT NULL,
  device_id text NOT NULL,
  status text NOT NULL,
  order_type text NOT NULL,
  source text NOT NULL,
  created_at timestamptz NOT NULL,
  local_day date NOT NULL,
  local_hour smallint NOT NULL CHECK (local_hour BETWEEN 0 AND 23),
  total_minor bigint NOT NULL,
  ordered_at timestamptz,
  ready_at timestamptz,
  contact_text text NOT NULL DEFAULT '',
  contact jsonb,
  sale boolean GENERATED ALWAYS AS (status IN ${SALE}) STORED,
  kitchen_seconds bigint GENERATED ALWAYS AS (
    CASE WHEN ordered_at IS NOT NULL AND ready_at IS NOT NULL
      THEN greatest(0, round(extract(epoch FROM ready_at - ordered_at)))::bigint END) STORED,
  PRIMARY KEY (tenant_id, order_id, venue_id)
);
-- The order search: newest first over every order (its first venue's row), over one venue's, one device's, one
-- status's or one source's. A filter that matches few orders then walks only those: over the newest-first index
-- alone, a device or source with no orders would walk the tenant's every order.
CREATE INDEX order_facts_newest ON order_facts (tenant_id, created_at DESC, order_id DESC) WHERE first_venue;
CREATE INDEX order_facts_venue ON order_facts (tenant_id, venue_id, created_at DESC, order_id DESC);
CREATE INDEX order_facts_device ON order_facts (tenant_id, device_id, created_at DESC, order_id DESC) WHERE first_venue;
CREATE INDEX order_facts_status ON order_facts (tenant_id, status, created_at DESC, order_id DESC) WHERE first_venue;
CREATE INDEX order_facts_source ON order_facts (tenant_id, source, created_at DESC, order_id DESC) WHERE first_venue;
-- A kitchen maximum recomputed: one venue's day.
CREATE INDEX order_facts_day ON order_facts (tenant_id, venue_id, local_day) WHERE kitchen_seconds IS NOT NULL;

CREATE TABLE order_product_facts (
  tenant_id text NOT NULL,
  order_id text NOT NULL,
  venue_id text NOT NULL,
  product_id text NOT NULL,
  quantity bigint NOT NULL,
  revenue_minor bigint NOT NULL,
  PRIMARY KEY (tenant_id, order_id, venue_id, product_id)
);

CREATE TABLE product_names (
  tenant_id text NOT NULL,
  product_id text NOT NULL,
  name text NOT NULL,
  seen_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, product_id)
);

CREATE TABLE sales_daily (
  tenant_id text NOT NULL,
  venue_id text NOT NULL,
  local_day date NOT NULL,
  order_type text NOT NULL,
  orders bigint NOT NULL,
  revenue_minor bigint NOT NULL,
  PRIMARY KEY (tenant_id, venue_id, local_day, order_type)
);
CREATE INDEX sales_daily_day ON sales_daily (tenant_id, local_day);

CREATE TABLE sales_hourly (
  tenant_id text NOT NULL,
  venue_id text NOT NULL,
  local_day date NOT NULL,
  local_hour smallint NOT NULL,
  orders bigint NOT NULL,
  revenue_minor bigint NOT NULL,
  PRIMARY KEY (tenant_id, venue_id, local_day, local_hour)
);
CREATE INDEX sales_hourly_day ON sales_hourly (tenant_id, local_day);

CREATE TABLE kitchen_daily (
  tenant_id text NOT NULL,
  venue_id text NOT NULL,
  local_day date NOT NULL,
  orders bigint NOT NULL,
  seconds_sum bigint NOT NULL,
  seconds_max bigint NOT NULL,
  PRIMARY KEY (tenant_id, venue_id, local_day)
);
CREATE INDEX kitchen_daily_stale ON kitchen_daily (tenant_id) WHERE seconds_max < 0;

CREATE TABLE product_daily (
  tenant_id text NOT NULL,
  venue_id text NOT NULL,
  local_day date NOT NULL,
  product_id text NOT NULL,
  quantity bigint NOT NULL,
  revenue_minor bigint NOT NULL,
  PRIMARY KEY (tenant_id, venue_id, local_day, product_id)
);

-- Every venue's together: the chain's top products read a few rows a day, not one per venue and product.
CREATE TABLE product_daily_tenant (
  tenant_id text NOT NULL,
  local_day date NOT NULL,
  product_id text NOT NULL,
  quantity bigint NOT NULL,
  revenue_minor bigint NOT NULL,
  PRIMARY KEY (tenant_id, local_day, product_id)
);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    CREATE INDEX order_facts_contact ON order_facts USING gin (contact_text gin_trgm_ops) WHERE first_venue;
  END IF;
END $$;

-- A confirmedAt that is no date reads as none (a box always sends one; the backfill must not fail on one).
CREATE FUNCTION pg_temp.report_instant(t text) RETURNS timestamptz LANGUAGE plpgsql STABLE AS $f$
BEGIN
  IF t IS NULL OR t !~ '^\\d{4}-\\d\\d-\\d\\dT' THEN RETURN NULL; END IF;
  RETURN t::timestamptz;
EXCEPTION WHEN others THEN RETURN NULL;
END $f$;

CREATE TEMP TABLE report_zones ON COMMIT DROP AS
  SELECT v.tenant_id, v.venue_id, coalesce(z.name, 'Europe/Warsaw') AS tz
  FROM venues v LEFT JOIN pg_timezone_names z ON z.name = v.document->>'timeZone';

CREATE TEMP TABLE report_buckets ON COMMIT DROP AS
  SELECT o.tenant_id, o.order_id, b.value AS bucket, b.n
  FROM orders o, jsonb_array_elements(o.data->'buckets') WITH ORDINALITY AS b(value, n);

CREATE TEMP TABLE report_lines ON COMMIT DROP AS
  SELECT b.tenant_id, b.order_id, b.bucket->>'venue' AS venue_id, coalesce(l->>'productId', '') AS product_id,
    coalesce(l->'product'->'literals'->>'name', l->'product'->'details'->'literals'->>'name') AS name,
    CASE WHEN l->>'quantity' ~ '^[0-9]{1,9}$' THEN (l->>'quantity')::bigint ELSE 0 END AS quantity,
    CASE WHEN l->>'price' ~ '^-?[0-9]{1,13}(\\.[0-9]{1,2})?$' THEN round((l->>'price')::numeric * 100)::bigint ELSE 0 END AS price_minor
  FROM report_buckets b,
    jsonb_array_elements(CASE jsonb_typeof(b.bucket->'lines') WHEN 'array' THEN b.bucket->'lines' ELSE '[]' END) AS l
  -- What was ordered: a NEW line is still in the basket, a CANCELLED one was taken back (the box's total).
  WHERE l->>'status' = 'ORDERED';

CREATE TEMP TABLE report_totals ON COMMIT DROP AS
  SELECT tenant_id, order_id, venue_id, sum(quantity * price_minor) AS total_minor FROM report_lines GROUP BY 1, 2, 3;

INSERT INTO order_facts (tenant_id, order_id, venue_id, first_venue, device_id, status, order_type, source, created_at,
  local_day, local_hour, total_minor, ordered_at, ready_at, contact_text, contact)
SELECT o.tenant_id, o.order_id, v.venue_id, v.n = 1, o.device_id, o.status, coalesce(o.data->>'orderType', ''),
  coalesce(o.data->>'source', ''), o.created_at, (o.created_at AT TIME ZONE z.tz)::date,
  extract(hour FROM o.created_at AT TIME ZONE z.tz)::smallint,
  coalesce(tot.total_minor, 0),
  t.ordered_at, t.ready_at,
  CASE WHEN jsonb_typeof(c.contact) = 'object' THEN lower(concat_ws(' ', c.contact->>'name', c.contact->>'phone', c.contact->>'email')) ELSE '' END,
  CASE WHEN jsonb_typeof(c.contact) = 'object' THEN c.contact END
FROM (SELECT tenant_id, order_id, bucket->>'venue' AS venue_id, min(n) AS n FROM report_buckets GROUP BY 1, 2, 3) v
JOIN orders o ON o.tenant_id = v.tenant_id AND o.order_id = v.order_id
JOIN report_zones z ON z.tenant_id = v.tenant_id AND z.venue_id = v.venue_id
LEFT JOIN report_totals tot ON tot.tenant_id = v.tenant_id AND tot.order_id = v.order_id AND tot.venue_id = v.venue_id
LEFT JOIN LATERAL (
  SELECT min(pg_temp.report_instant(x.command->>'confirmedAt')) FILTER (WHERE x.data->>'status' IN ${SALE}) AS ordered_at,
         min(pg_temp.report_instant(x.command->>'confirmedAt')) FILTER (WHERE x.data->>'status' = 'READY') AS ready_at
  FROM order_versions x WHERE x.tenant_id = o.tenant_id AND x.order_id = o.order_id
) t ON true
LEFT JOIN LATERAL (
  SELECT e.envelope::jsonb->'body'->'detail'->'contact' AS contact FROM sync_events e
  WHERE e.tenant_id = o.tenant_id AND e.device_id = o.device_id AND e.seq = o.last_seq LIMIT 1
) c ON true;

INSERT INTO order_product_facts (tenant_id, order_id, venue_id, product_id, quantity, revenue_minor)
SELECT tenant_id, order_id, venue_id, product_id, sum(quantity), sum(quantity * price_minor)
FROM report_lines GROUP BY 1, 2, 3, 4;

INSERT INTO product_names (tenant_id, product_id, name, seen_at)
SELECT DISTINCT ON (l.tenant_id, l.product_id) l.tenant_id, l.product_id, l.name, o.created_at
FROM report_lines l JOIN orders o ON o.tenant_id = l.tenant_id AND o.order_id = l.order_id
WHERE l.name IS NOT NULL ORDER BY l.tenant_id, l.product_id, o.created_at DESC;

INSERT INTO sales_daily SELECT tenant_id, venue_id, local_day, order_type, count(*), sum(total_minor)
  FROM order_facts WHERE sale GROUP BY 1, 2, 3, 4;
INSERT INTO sales_hourly SELECT tenant_id, venue_id, local_day, local_hour, count(*), sum(total_minor)
  FROM order_facts WHERE sale GROUP BY 1, 2, 3, 4;
INSERT INTO kitchen_daily SELECT tenant_id, venue_id, local_day, count(*), sum(kitchen_seconds), max(kitchen_seconds)
  FROM order_facts WHERE kitchen_seconds IS NOT NULL GROUP BY 1, 2, 3;
INSERT INTO product_daily SELECT p.tenant_id, p.venue_id, f.local_day, p.product_id, sum(p.quantity), sum(p.revenue_minor)
  FROM order_product_facts p JOIN order_facts f USING (tenant_id, order_id, venue_id) WHERE f.sale GROUP BY 1, 2, 3, 4;
INSERT INTO product_daily_tenant SELECT tenant_id, local_day, product_id, sum(quantity), sum(revenue_minor)
  FROM product_daily GROUP BY 1, 2, 3;

DROP FUNCTION pg_temp.report_instant(text);
`;
