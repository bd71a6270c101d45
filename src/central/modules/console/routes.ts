import { Type } from '@sinclair/typebox';
import { json, type Route } from '../../../http/types.js';
import { ok } from '../../contracts.js';
import type { Pool } from '../../db/pool.js';
import { HQ_CONSOLE_CLIENT } from '../auth/service.js';
import { createTenantRepo } from '../tenants/repo.js';

const Bootstrap = Type.Object(
  {
    tenant: Type.Union([Type.String(), Type.Null()], {
      description: "the central's tenant when it has exactly one; null: the sign-in asks for it",
    }),
    tenantName: Type.Union([Type.String(), Type.Null()]),
    clientId: Type.Literal(HQ_CONSOLE_CLIENT),
  },
  { additionalProperties: false },
);

/** What the console needs before anyone signs in (docs/sync.md "The headquarters console"). */
export function consoleRoutes(pool: Pool): Route[] {
  return [
    {
      method: 'get',
      path: '/hq-app/bootstrap',
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'getConsoleBootstrap',
        summary: "The console's sign-in facts: the tenant (when the central has one) and its OAuth client",
        responses: ok('the tenant and client id', Bootstrap),
      },
      async handle() {
        const only = await createTenantRepo(pool).onlyTenant();
        return json(200, { tenant: only?.id ?? null, tenantName: only?.name ?? null, clientId: HQ_CONSOLE_CLIENT });
      },
    },
  ];
}
