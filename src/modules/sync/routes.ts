import { json, type Route } from '../../http/types.js';
import type { SyncStatus } from './status.js';

/** Staff see how far the box is with its central. */
export function syncRoutes(status: () => SyncStatus): Route[] {
  return [
    { method: 'get', path: '/sync-api/api/status', auth: 'write', body: 'none', handle: () => json(200, status()) },
  ];
}
