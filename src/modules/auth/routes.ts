import { tokenRoute } from '../../http/token-route.js';
import type { HttpRequest, Route } from '../../http/types.js';
import { discoveryRoutes } from '../../shared/oauth/discovery.js';
import type { TokenCall } from '../../http/token-route.js';
import type { AuthService } from './service.js';
import { throttleAddress } from '../../shared/oauth/throttle.js';

/**
 * The box's token endpoint, the same at `/auth-oauth2/tenants/{tenant}/oauth/token` (the tenant's metadata names
 * it), the tenants' metadata and the JWKS (docs/api.md "OAuth discovery").
 */
export function authRoutes(auth: AuthService): Route[] {
  const issue = (call: TokenCall, req: HttpRequest) =>
    auth.token({ ...call, clientAddress: throttleAddress(req.remoteAddress) });
  return [
    tokenRoute(issue),
    tokenRoute(issue, [], true),
    ...discoveryRoutes({ keys: auth.signingKeys, tenantExists: auth.tenantExists, scopes: ['read', 'write'] }),
  ];
}
