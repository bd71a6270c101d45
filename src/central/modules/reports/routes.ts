import { type HttpRequest, json, type Route, route } from '../../../http/types.js';
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

/** The range of a query its schema checked: the calendar and the span checked here (rangeParams). */
const rangeOf = (req: HttpRequest, venueId: string | undefined, maxDays = MAX_DAYS): Range => ({
  ...rangeParams(req.query, maxDays),
  venueId,
});

/** Headquarters' reports and dashboard (docs/sync.md "HQ reports and order search"); any central token of the tenant. */
export function reportRoutes(reports: ReportsService): Route[] {
  return [
    route({
      method: 'get',
      path: '/hq-api/api/reports/sales',
      auth: 'bearer',
      body: 'none',
      schema: { query: SalesQuery },
      doc: {
        operationId: 'getSalesReport',
        summary: 'Sales (ORDERED, READY, COMPLETED orders) per venue and venue-local day or hour',
        responses: ok('the sales rows and their totals', SalesReport),
      },
      async handle({ req, query, principal }) {
        const by = query.by ?? 'day';
        const range = rangeOf(req, query.venueId, by === 'hour' ? HOUR_DAYS : MAX_DAYS);
        return json(200, await reports.sales(principal.tenantId, range, by));
      },
    }),
    route({
      method: 'get',
      path: '/hq-api/api/reports/products',
      auth: 'bearer',
      body: 'none',
      schema: { query: ProductsQuery },
      doc: {
        operationId: 'getProductsReport',
        summary: 'Top products by revenue',
        responses: ok('the products', ProductsReport),
      },
      async handle({ req, query, principal }) {
        const range = rangeOf(req, query.venueId);
        return json(200, await reports.products(principal.tenantId, range, query.limit ?? 20));
      },
    }),
    route({
      method: 'get',
      path: '/hq-api/api/reports/channels',
      auth: 'bearer',
      body: 'none',
      schema: { query: RangeQuery },
      doc: {
        operationId: 'getChannelsReport',
        summary: 'Sales per order type',
        responses: ok('the order types', ChannelsReport),
      },
      handle: async ({ req, query, principal }) =>
        json(200, await reports.channels(principal.tenantId, rangeOf(req, query.venueId))),
    }),
    route({
      method: 'get',
      path: '/hq-api/api/reports/kitchen',
      auth: 'bearer',
      body: 'none',
      schema: { query: RangeQuery },
      doc: {
        operationId: 'getKitchenReport',
        summary: "Kitchen times per venue: each order's first ORDERED to its first READY",
        responses: ok('the venues', KitchenReport),
      },
      handle: async ({ req, query, principal }) =>
        json(200, await reports.kitchen(principal.tenantId, rangeOf(req, query.venueId))),
    }),
    {
      method: 'get',
      path: '/hq-api/api/dashboard',
      auth: 'bearer',
      body: 'none',
      doc: {
        operationId: 'getDashboard',
        summary: "Today's and this week's sales per venue, today's orders per hour, and the fleet",
        responses: ok('the dashboard', Dashboard),
      },
      handle: async ({ principal }) => json(200, await reports.dashboard(principal.tenantId)),
    },
  ];
}
