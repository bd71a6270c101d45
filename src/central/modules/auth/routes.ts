import { type TokenCall, tokenRoute } from '../../../http/token-route.js';
import type { HttpRequest, Route } from '../../../http/types.js';
import { discoveryRoutes } from '../../../shared/oauth/discovery.js';
import { throttleAddress } from '../../../shared/oauth/throttle.js';
import { type CentralAuth, HQ_CONSOLE_CLIENT } from './service.js';

/**
 * The central's token endpoint: the box's shape (src/http/token-route.ts), for headquarters' users; the console
 * signs in as the public client `hq-console` (docs/sync.md "The headquarters console"). As on the box, the same
 * endpoint per tenant, the tenants' metadata and the JWKS (docs/api.md "OAuth discovery").
 */
export function authRoutes(auth: CentralAuth): Route[] {
  const issue = (call: TokenCall, req: HttpRequest) =>
    auth.token({ ...call, clientAddress: throttleAddress(req.remoteAddress) });
  return [
    tokenRoute(issue, [HQ_CONSOLE_CLIENT]),
    tokenRoute(issue, [HQ_CONSOLE_CLIENT], true),
    ...discoveryRoutes({
      keys: auth.signingKeys,
      tenantExists: auth.tenantExists,
      scopes: ['read', 'write'],
      publicClients: true,
    }),
  ];
}
