import { json, type Route } from '../../../http/types.js';
import { invalidField } from '../../../shared/errors.js';
import { idParam, limitOf } from '../../../shared/validate.js';
import { ok } from '../../contracts.js';
import { rangeParams } from './dates.js';
import type { Range } from './repo.js';
import {
  ChannelsReport,
  Dashboard,
  KitchenReport,
  ProductsQuery,
  ProductsReport,
  RangeQuery,
  SalesQuery,
  SalesReport,
} from './schemas.js';
import type { ReportsService } from './service.js';

/** A report spans at most this many days; by hour at most HOUR_DAYS (a row per venue and hour). */
export const MAX_DAYS = 366;
export const HOUR_DAYS = 31;

const rangeOf = (query: URLSearchParams, maxDays = MAX_DAYS): Range => ({
  ...rangeParams(query, maxDays),
  venueId: idParam(query, 'venueId'),
});

/** Headquarters' reports and dashboard (docs/sync.md "HQ reports and order search"); any central token of the tenant. */
export function reportRoutes(reports: ReportsService): Route[] {
  return [
    {
      method: 'get',
      path: '/hq-api/api/reports/sales',
      auth: 'bearer',
      body: 'none',
      schema: { query: SalesQuery },
      doc: {
        summary: 'Sales (ORDERED, READY, COMPLETED orders) per venue and venue-local day or hour',
        responses: ok('the sales rows and their totals', SalesReport),
      },
      async handle({ req, principal }) {
        const by = req.query.get('by') ?? 'day';
        if (by !== 'day' && by !== 'hour') throw invalidField('by', 'by must be day or hour');
        const range = rangeOf(req.query, by === 'hour' ? HOUR_DAYS : MAX_DAYS);
        return json(200, await reports.sales(principal.tenantId, range, by));
      },
    },
    {
      method: 'get',
      path: '/hq-api/api/reports/products',
      auth: 'bearer',
      body: 'none',
      schema: { query: ProductsQuery },
      doc: { summary: 'Top products by revenue', responses: ok('the products', ProductsReport) },
      async handle({ req, principal }) {
        const range = rangeOf(req.query);
        return json(200, await reports.products(principal.tenantId, range, limitOf(req.query, 20, 200)));
      },
    },
    {
      method: 'get',
      path: '/hq-api/api/reports/channels',
      auth: 'bearer',
      body: 'none',
      schema: { query: RangeQuery },
      doc: { summary: 'Sales per order type', responses: ok('the order types', ChannelsReport) },
      handle: async ({ req, principal }) => json(200, await reports.channels(principal.tenantId, rangeOf(req.query))),
    },
    {
      method: 'get',
      path: '/hq-api/api/reports/kitchen',
      auth: 'bearer',
      body: 'none',
      schema: { query: RangeQuery },
      doc: {
        summary: "Kitchen times per venue: each order's first ORDERED to its first READY",
        responses: ok('the venues', KitchenReport),
      },
      handle: async ({ req, principal }) => json(200, await reports.kitchen(principal.tenantId, rangeOf(req.query))),
    },
    {
      method: 'get',
      path: '/hq-api/api/dashboard',
      auth: 'bearer',
      body: 'none',
      doc: {
        summary: "Today's and this week's sales per venue, today's orders per hour, and the fleet",
        responses: ok('the dashboard', Dashboard),
      },
      handle: async ({ principal }) => json(200, await reports.dashboard(principal.tenantId)),
    },
  ];
}
