import { tokenRoute } from '../../http/token-route.js';
import type { Route } from '../../http/types.js';
import type { AuthService } from './service.js';
import { throttleAddress } from '../../shared/oauth/throttle.js';

export function authRoutes(auth: AuthService): Route[] {
  return [tokenRoute((call, req) => auth.token({ ...call, clientAddress: throttleAddress(req.remoteAddress) }))];
}
