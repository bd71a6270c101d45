import { Type } from '@sinclair/typebox';
import { healthzRoute } from '../../../http/healthz.js';
import { json, type Route } from '../../../http/types.js';
import { AppError } from '../../../shared/errors.js';
import { ok } from '../../contracts.js';
import type { DatabaseState } from './probe.js';

const Ready = Type.Object(
  {
    status: Type.Literal('ready'),
    database: Type.Object({
      schema: Type.Integer({ description: 'the schema version, the one this central knows' }),
      latencyMs: Type.Integer({ description: 'how long the probe query took' }),
    }),
    listening: Type.Boolean({
      description:
        'whether the catalogue notifications arrive (LISTEN); while false, long polls of this process end at their timeout',
    }),
  },
  { additionalProperties: false },
);

/**
 * /healthz (the process is up) and /readyz (it can serve: the database answers at this code's schema), both
 * without a token, for a load balancer's health check (docs/sync.md "Running it"). A stopping central answers
 * 503 to /readyz like every route, so the balancer sends new requests elsewhere while it drains.
 */
export function centralHealthRoutes(deps: { database(): Promise<DatabaseState>; listening(): boolean }): Route[] {
  return [
    healthzRoute(),
    {
      method: 'get',
      path: '/readyz',
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'getReadiness',
        summary: 'Ready to serve, or 503 unavailable with the reason (args: database or schema) and Retry-After',
        tag: 'health',
        responses: ok('ready', Ready),
      },
      async handle() {
        const db = await deps.database();
        if (!db.ok) {
          throw AppError.of('unavailable', db.message, [db.reason === 'schema' ? 'schema' : 'database'], {
            'Retry-After': '2',
          });
        }
        return json(200, {
          status: 'ready',
          database: { schema: db.schema, latencyMs: db.latencyMs },
          listening: deps.listening(),
        });
      },
    },
  ];
}
