import { type TSchema, Type } from '@sinclair/typebox';
import pkg from '../../package.json';
import { openApiDocument } from '../http/contracts/openapi.js';
import { openApiRoutes } from '../http/contracts/routes.js';
import type { DocResponse, Route } from '../http/types.js';
import { SYNC_SCHEMAS, SyncErrorBody } from '../shared/sync-messages.js';

const DESCRIPTION =
  "The central node's API (docs/sync.md): the boxes' sync routes (enrolment; hello, batches, the tail, the " +
  "catalogue's long poll and menu images, signed by the device) and headquarters' API (a central token). The sync " +
  "protocol's messages are under components/schemas: a batch's header line, each kind of event, the answers.";

/** Headers of a request the device signs (src/shared/sync-protocol.ts requestSigningText). */
export const SIGNED_HEADERS = [
  { name: 'x-tenant', required: true, description: "the device's tenant" },
  { name: 'x-device', required: true, description: 'the device id' },
  { name: 'x-timestamp', required: true, description: "the box's clock when it signed, ms since 1970" },
  { name: 'x-nonce', required: true, description: '16 random bytes, base64url: a request is taken once' },
  {
    name: 'x-challenge',
    required: false,
    description: "a hello sent again after a 401 requestStale: the challenge that refusal's args[0] named",
  },
  {
    name: 'x-signature',
    required: true,
    description: "Ed25519 signature (base64) by the device's key over requestSigningText",
  },
];

/** A 200 answer for a route's doc; without a schema, a JSON object of the fields `description` names. */
export const ok = (
  description: string,
  schema: TSchema = Type.Object({}, { additionalProperties: true, description }),
): Record<number, DocResponse> => ({ 200: { description, schema } });

/**
 * The central's own contract (docs/sync.md "API"): OpenAPI 3.1 made from `routes()`, the route list the central
 * mounts (these included), with the sync protocol's schemas; and a page of it.
 */
export function centralContractRoutes(routes: () => readonly Route[]): Route[] {
  return openApiRoutes(() =>
    openApiDocument(
      routes(),
      { title: 'venue-box central', version: pkg.version, description: DESCRIPTION },
      {
        server: 'the central node',
        bearer:
          'a central access token of POST /auth-oauth2/oauth/token (a headquarters user); changes need scope write',
        // The sync conflict's body (the error body with where to resume) is a component, as error answers refer
        // to theirs (docs/api.md "Contracts: /openapi.json and /asyncapi.json").
        schemas: { ...SYNC_SCHEMAS, SyncErrorBody },
      },
    ),
  );
}
