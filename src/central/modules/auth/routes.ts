import { tokenRoute } from '../../../http/token-route.js';
import type { Route } from '../../../http/types.js';
import { throttleAddress } from '../../../shared/oauth/throttle.js';
import { type CentralAuth, HQ_CONSOLE_CLIENT } from './service.js';

/**
 * The central's token endpoint: the box's shape (src/http/token-route.ts), for headquarters' users; the console
 * signs in as the public client `hq-console` (docs/sync.md "The headquarters console").
 */
export function authRoutes(auth: CentralAuth): Route[] {
  return [
    tokenRoute(
      (call, req) => auth.token({ ...call, clientAddress: throttleAddress(req.remoteAddress) }),
      [HQ_CONSOLE_CLIENT],
    ),
  ];
}
