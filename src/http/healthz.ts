import { Type } from '@sinclair/typebox';
import { json, type Route } from './types.js';

/** GET /healthz, the box's and the central's alike: the process is up (served while stopping too; no token). */
export const healthzRoute = (): Route => ({
  method: 'get',
  path: '/healthz',
  auth: 'none',
  body: 'none',
  whileStopping: true,
  doc: {
    operationId: 'getHealth',
    summary: 'The process is up',
    tag: 'health',
    responses: { 200: { description: 'up', schema: Type.Object({ status: Type.Literal('ok') }) } },
  },
  handle: () => json(200, { status: 'ok' }),
});
