import { Type } from '@sinclair/typebox';
import { json, type Route } from '../../http/types.js';
import type { SyncStatus } from './status.js';

const N = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(t: T) =>
  Type.Union([t, Type.Null()]);
const SyncStatusSchema = Type.Object(
  {
    central: N(Type.String()),
    deviceId: N(Type.String()),
    tenant: N(Type.String()),
    venue: N(Type.String()),
    backlog: Type.Integer(),
    oldestUnsyncedAgeS: N(Type.Integer()),
    lastSuccessAt: N(Type.String()),
    lastError: N(Type.String()),
    lastErrorAt: N(Type.String()),
    deadLetters: Type.Integer(),
    epoch: Type.Integer(),
    ackedSeq: Type.Integer(),
    newestSeq: Type.Integer(),
    catalogue: Type.Union([
      Type.Object(
        {
          rev: Type.Integer(),
          checksum: N(Type.String()),
          appliedAt: N(Type.String()),
          lastError: N(Type.String()),
          lastErrorAt: N(Type.String()),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
);

/** Staff see how far the box is with its central. */
export function syncRoutes(status: () => SyncStatus): Route[] {
  return [
    {
      method: 'get',
      path: '/sync-api/api/status',
      auth: 'write',
      body: 'none',
      doc: {
        operationId: 'getSyncStatus',
        summary: 'How far the box is with its central (staff)',
        responses: { 200: { description: 'docs/sync.md "Sync to the central node"', schema: SyncStatusSchema } },
      },
      handle: () => json(200, status()),
    },
  ];
}
