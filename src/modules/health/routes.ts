import { Type } from '@sinclair/typebox';
import type { HttpRequest, Principal, Route } from '../../http/types.js';
import { json } from '../../http/types.js';
import { healthzRoute } from '../../http/healthz.js';
import { AppError, forbidden } from '../../shared/errors.js';
import { isStaff } from '../ordering/service.js';
import { StandbySummary } from '../standby/status.js';
import type { createAddressList } from '../../shared/addresses.js';
import type { BoxMetrics } from './metrics.js';
import type { Readiness } from './readiness.js';

export interface HealthRouteDeps {
  /** Absent: metrics.enabled is false, and /metrics is not served (404 like any unknown path). */
  metrics?: BoxMetrics;
  /** metrics.allowAddresses: scrapers that need no token. */
  allow: ReturnType<typeof createAddressList>;
  /** Verifies the bearer token; throws a 401 AppError. */
  authenticate(req: HttpRequest): Principal;
  readiness(): Readiness;
  /** The box's part in a pair, shown with "ready" (docs/operations.md "A standby box"). */
  standby(): StandbySummary;
}

/**
 * /healthz and /readyz take no token: they say "up" and "ready, or the reason not", which anyone on the LAN can
 * tell by trying an order anyway. /metrics shows the box's load and its printers' names: staff only, or the
 * addresses of metrics.allowAddresses (docs/operations.md "Health: metrics, readiness and the watchdog").
 */
export function healthRoutes(deps: HealthRouteDeps): Route[] {
  const { metrics } = deps;
  return [
    healthzRoute(),
    {
      method: 'get',
      path: '/readyz',
      auth: 'none',
      body: 'none',
      whileStopping: true,
      doc: {
        operationId: 'getReadiness',
        summary: 'Ready to serve, or why not (503 unavailable or storageFull, args: the reason)',
        tag: 'health',
        responses: {
          200: {
            description: 'ready; `standby`: whether the orders are on this box alone or on its standby too',
            schema: Type.Object({ status: Type.Literal('ready'), standby: StandbySummary }),
          },
        },
      },
      handle() {
        const r = deps.readiness();
        if (r.ready) return json(200, { status: 'ready', standby: deps.standby() });
        throw AppError.of(r.code, r.message, [r.reason]);
      },
    },
    ...(metrics
      ? [
          {
            method: 'get',
            path: '/metrics',
            auth: 'none',
            body: 'none',
            doc: {
              operationId: 'getMetrics',
              summary: 'Prometheus metrics: a staff token, or a request from an allowed address',
              description:
                'A staff bearer token (scope write), or none from an address of `metrics.allowAddresses` (the ' +
                'scraper: hence the alternative without a scheme); anyone else gets 401 without a token, 403 with ' +
                'a customer\'s (docs/operations.md "Health: metrics, readiness and the watchdog").',
              tag: 'health',
              security: [{ bearer: ['write'] }, {}],
              responses: {
                200: { description: 'the Prometheus text format', contentType: 'text/plain' },
                401: { description: 'unauthorized: no token, from an address not allowed' },
                403: { description: "forbidden: a customer's token" },
              },
            },
            async handle({ req }) {
              if (!deps.allow.allows(req.remoteAddress) && !isStaff(deps.authenticate(req))) {
                throw forbidden('metrics need a staff token (scope write)');
              }
              return { status: 200, raw: await metrics.render(), headers: { 'content-type': metrics.contentType } };
            },
          } satisfies Route,
        ]
      : []),
  ];
}
