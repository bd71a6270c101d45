import { type Static, Type } from '@sinclair/typebox';
import { LimitParam, LocalDateParam, OneOf } from '../../../http/contracts/query.js';

/** Query and response schemas of headquarters' reports and dashboard (docs/sync.md "HQ reports and order search"). */
const Money = Type.String({ pattern: '^-?\\d+\\.\\d{2}$', description: 'an amount with two decimals, "36.00"' });
const LocalDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'a venue-local date YYYY-MM-DD' });
const Count = Type.Integer({ minimum: 0 });
const Instant = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

/**
 * A report's range (the queries' schemas are their checks, src/http/contracts/query.ts): a date that is no day of the
 * calendar (02-30), `to` before `from`, or a span over the report's days is still refused by the handler.
 */
const rangeQuery = {
  from: LocalDateParam('first venue-local date, YYYY-MM-DD (years 2000-9999)'),
  to: LocalDateParam('last venue-local date, YYYY-MM-DD, inclusive, not before from (at most 366 days)'),
  venueId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'one venue (404 when it is not the tenant’s)' }),
  ),
};

export const SalesQuery = Type.Object({
  ...rangeQuery,
  by: Type.Optional(OneOf(['day', 'hour'] as const, 'day (default) or hour (at most 31 days)')),
});
export const ProductsQuery = Type.Object({ ...rangeQuery, limit: LimitParam(20, 200) });
export const RangeQuery = Type.Object(rangeQuery);

const Totals = { orders: Count, revenue: Money, averageTicket: Money };

export const SalesReport = Type.Object(
  {
    from: LocalDate,
    to: LocalDate,
    by: Type.String({ enum: ['day', 'hour'] }),
    rows: Type.Array(
      Type.Object(
        {
          venueId: Type.String(),
          venueName: Type.String(),
          period: Type.String({ description: 'YYYY-MM-DD, or YYYY-MM-DDTHH by hour; venue-local' }),
          ...Totals,
        },
        { additionalProperties: false },
      ),
      { description: 'sorted by period, then venue name' },
    ),
    totals: Type.Object(Totals, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

export const ProductsReport = Type.Object(
  {
    from: LocalDate,
    to: LocalDate,
    rows: Type.Array(
      Type.Object(
        {
          productId: Type.String(),
          name: Type.String({ description: "the product's name as last sold (its id when no line named it)" }),
          quantity: Count,
          revenue: Money,
        },
        { additionalProperties: false },
      ),
      { description: 'by revenue, highest first' },
    ),
  },
  { additionalProperties: false },
);

export const ChannelsReport = Type.Object(
  {
    from: LocalDate,
    to: LocalDate,
    rows: Type.Array(Type.Object({ orderType: Type.String(), ...Totals }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export const KitchenReport = Type.Object(
  {
    from: LocalDate,
    to: LocalDate,
    rows: Type.Array(
      Type.Object(
        {
          venueId: Type.String(),
          venueName: Type.String(),
          orders: Count,
          averageSeconds: Count,
          maxSeconds: Count,
        },
        { additionalProperties: false, description: 'orders that reached READY: their first ORDERED to first READY' },
      ),
    ),
  },
  { additionalProperties: false },
);

const Summary = Type.Object(
  { ...Totals, kitchenAverageSeconds: Type.Union([Count, Type.Null()]) },
  { additionalProperties: false },
);
const DeviceRef = { deviceId: Type.String(), name: Nullable(Type.String()), venueId: Type.String() };

export const Dashboard = Type.Object(
  {
    generatedAt: Instant,
    today: LocalDate,
    weekFrom: LocalDate,
    venues: Type.Array(
      Type.Object(
        { venueId: Type.String(), venueName: Type.String(), today: Summary, week: Summary },
        { additionalProperties: false },
      ),
    ),
    ordersPerHour: Type.Array(
      Type.Object({ hour: Type.Integer({ minimum: 0, maximum: 23 }), orders: Count }, { additionalProperties: false }),
      { minItems: 24, maxItems: 24 },
    ),
    fleet: Type.Object(
      {
        devices: Count,
        online: Count,
        offline: Type.Array(
          Type.Object({ ...DeviceRef, lastContactAt: Nullable(Instant) }, { additionalProperties: false }),
        ),
        lagging: Type.Array(
          Type.Object(
            { ...DeviceRef, lagEvents: Count, oldestPendingAt: Nullable(Instant) },
            { additionalProperties: false },
          ),
        ),
        deadLetters: Type.Array(Type.Object({ ...DeviceRef, count: Count }, { additionalProperties: false })),
        rolledBack: Type.Array(
          Type.Object(
            { ...DeviceRef, version: Type.String(), reason: Nullable(Type.String()) },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export type SalesReport = Static<typeof SalesReport>;
export type Dashboard = Static<typeof Dashboard>;
