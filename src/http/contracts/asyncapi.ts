import { Type } from '@sinclair/typebox';
import { CLOSE_CODES, FRAMES, frameSchema, type FrameType, SOCKET_PATH } from '../../shared/socket-protocol.js';
import { hostOf } from '../origin.js';
import type { ApiInfo } from './openapi.js';
import { MAX_COUNTER } from './query.js';
import { jsonSchema } from './json-schema.js';

/** The server named when the request's Host says none that is sane (the box's default port). */
export const DEFAULT_SOCKET_HOST = 'localhost:8080';

/**
 * The server a client reached the box at (docs/api.md "Contracts: /openapi.json and /asyncapi.json"): the request's
 * Host header when it is a sane host[:port] (a generated client then connects where it fetched the document
 * from), else DEFAULT_SOCKET_HOST. Nothing else of the header gets into the document.
 */
export const socketHost = (header: string | undefined): string => hostOf(header) ?? DEFAULT_SOCKET_HOST;

/**
 * AsyncAPI 3 for the socket, from the protocol's own schemas (src/shared/socket-protocol.ts; docs/api.md "The
 * socket"): one channel, the socket's path, on which the box sends every frame type; the client sends nothing.
 * `host` is the server's (socketHost).
 */
export function asyncApiDocument(info: ApiInfo, host = DEFAULT_SOCKET_HOST): Record<string, unknown> {
  const types = Object.keys(FRAMES) as FrameType[];
  const messages = Object.fromEntries(
    types.map((type) => [
      type,
      {
        name: type,
        title: type,
        summary: FRAMES[type].summary,
        description: FRAMES[type].description,
        contentType: 'application/json',
        payload: jsonSchema(frameSchema(type)),
      },
    ]),
  );
  const closeCodes = CLOSE_CODES.map((c) => `${c.code} \`${c.reason}\`: ${c.meaning}`).join('\n- ');
  return {
    asyncapi: '3.0.0',
    info: { ...info, description: `${info.description}\n\nClose codes:\n- ${closeCodes}` },
    defaultContentType: 'application/json',
    servers: {
      box: { host, protocol: 'ws', description: 'the box; the same host and port as its HTTP API' },
    },
    channels: {
      socket: {
        address: SOCKET_PATH,
        title: 'The socket',
        description:
          'Pushes for one user (or, with ?venue=V, for every order of a venue: staff). Frames are JSON text ' +
          '`{type, seq, payload}`; on one socket every seq is higher than the one before it. Reconnect with ?since=N.',
        messages: Object.fromEntries(types.map((type) => [type, { $ref: `#/components/messages/${type}` }])),
        bindings: {
          ws: {
            method: 'GET',
            query: jsonSchema(
              Type.Object({
                since: Type.Optional(
                  Type.Integer({
                    minimum: 0,
                    maximum: MAX_COUNTER,
                    description: 'the last seq processed: the frames after it are replayed first',
                  }),
                ),
                venue: Type.Optional(
                  Type.String({ description: "a venue's id: every order of the venue (staff, scope write)" }),
                ),
                ticket: Type.Optional(
                  Type.String({
                    description:
                      'for browsers, which cannot set Authorization on a WebSocket: a single-use ticket from ' +
                      '`POST /ordering-api/api/socket-ticket` (bearer), usable for 30 s; the socket is then the ' +
                      "token's. Unknown, used or expired: 401 before the upgrade",
                  }),
                ),
                access_token: Type.Optional(
                  Type.String({
                    description:
                      "the bearer token itself, for older browser clients: it ends up in proxies' access logs and " +
                      'browser tooling that records URLs, where it stays usable until it expires; prefer `ticket`',
                  }),
                ),
              }),
            ),
            headers: jsonSchema(
              Type.Object({
                Authorization: Type.Optional(Type.String({ description: 'Bearer <access token>' })),
              }),
            ),
            bindingVersion: '0.1.0',
          },
        },
      },
    },
    operations: {
      receiveFrames: {
        action: 'send',
        title: 'Frames the box sends',
        summary: 'Every frame of the socket; clients ignore types they do not know',
        channel: { $ref: '#/channels/socket' },
        messages: types.map((type) => ({ $ref: `#/channels/socket/messages/${type}` })),
      },
    },
    components: { messages },
  };
}
