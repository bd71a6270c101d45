import { type TSchema, Type } from '@sinclair/typebox';
import { HTTP_ERRORS, OAUTH_ERRORS } from '../../shared/errors.js';
import type { DocResponse, Route, SecurityScheme } from '../types.js';
import { jsonSchema } from './json-schema.js';

/** The API's error body (docs/api.md "Errors"); `code` is one of the catalogue's HTTP codes (src/shared/errors.ts). */
export const ErrorBodySchema = Type.Object(
  {
    message: Type.String(),
    codes: Type.Array(
      Type.Object(
        {
          code: Type.String({ enum: Object.keys(HTTP_ERRORS) }),
          message: Type.String(),
          args: Type.Array(Type.String()),
        },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
  },
  { additionalProperties: false },
);

/**
 * The token endpoint's error body (RFC 6749 section 5.2, docs/api.md "Errors"), a component as ErrorBody is. Kept
 * here, beside ErrorBody, so every document names the two error shapes the same way.
 */
export const OAuthErrorSchema = Type.Object(
  {
    error: Type.String({ enum: Object.keys(OAUTH_ERRORS) }),
    error_description: Type.String(),
  },
  { additionalProperties: false },
);

/** Schemas every document holds as components, and answers refer to by `$ref` rather than repeat. */
const COMPONENTS = new Map<TSchema, string>([
  [ErrorBodySchema, 'ErrorBody'],
  [OAuthErrorSchema, 'OAuthError'],
]);

/** The client's credentials at the token endpoint (docs/api.md "Errors", the paragraph on client credentials). */
const CLIENT_BASIC =
  "the OAuth client's id and secret as HTTP Basic (RFC 6749 2.3.1 client_secret_basic; the demo's " +
  '`demo-kiosk` / `demo-kiosk-secret`); or, instead, `client_id` and `client_secret` in the form (client_secret_post)';

const METHODS: Record<Route['method'], string> = {
  get: 'get',
  post: 'post',
  put: 'put',
  patch: 'patch',
  del: 'delete',
};

/** `/order/:id/append` -> `/order/{id}/append` */
export const openApiPath = (path: string): string => path.replace(/:(\w+)/g, '{$1}');

export interface ApiInfo {
  title: string;
  version: string;
  description: string;
}

/** What differs between the box's document and the central's. */
export interface ApiSetting {
  /** What the server is ('the box'). */
  server: string;
  /** How a bearer token is had. */
  bearer: string;
  /** Schemas a reader needs besides the routes' own (the sync protocol's messages), by name. */
  schemas?: Record<string, TSchema>;
}

const BOX: ApiSetting = {
  server: 'the box',
  bearer: 'an access token of POST /auth-oauth2/oauth/token; staff calls need scope write',
};

/**
 * OpenAPI 3.1 from the route list the box mounts (docs/api.md "Contracts: /openapi.json and /asyncapi.json"): each
 * route's body and query from its `schema` (the objects its validator compiled), its summary, parameters and
 * answers from its `doc`, its security from its auth, and the error body
 * every route may answer with.
 */
export function openApiDocument(
  routes: readonly Route[],
  info: ApiInfo,
  setting: ApiSetting = BOX,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Map<string, string>();
  // An answer whose schema is one of the components (the setting's too: a sync refusal's body) refers to it.
  const components = new Map([
    ...COMPONENTS,
    ...Object.entries(setting.schemas ?? {}).map(([name, schema]) => [schema, name] as const),
  ]);
  const response = (r: DocResponse) => responseObject(r, components);
  for (const route of routes) {
    const doc = route.doc;
    if (!doc) throw new Error(`route ${route.method} ${route.path} has no doc`);
    // Generated clients name their methods by it: two alike would make one method of two operations.
    const other = operationIds.get(doc.operationId);
    if (other) throw new Error(`operationId ${doc.operationId} of ${route.path} is also ${other}'s`);
    operationIds.set(doc.operationId, route.path);
    const path = openApiPath(route.path);
    const params = [...route.path.matchAll(/:(\w+)/g)].map((m) => ({
      name: m[1]!,
      in: 'path',
      required: true,
      description: doc.params?.[m[1]!] ?? m[1]!,
      schema: { type: 'string' },
    }));
    const querySchema = route.schema?.query;
    const query = querySchema
      ? Object.entries(jsonSchema(querySchema).properties as Record<string, Record<string, unknown>>).map(
          ([name, schema]) => ({
            name,
            in: 'query',
            required: ((jsonSchema(querySchema).required as string[] | undefined) ?? []).includes(name),
            ...(schema.description ? { description: schema.description } : {}),
            // A list is one comma-separated value (`status=ORDERED,READY`), as src/http/contracts/query.ts reads it.
            ...(schema.type === 'array' ? { style: 'form', explode: false } : {}),
            schema,
          }),
        )
      : [];
    const headers = (doc.headers ?? []).map((h) => ({
      name: h.name,
      in: 'header',
      required: h.required,
      description: h.description,
      schema: { type: 'string' },
    }));
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(doc.responses)) {
      // An error answer documented without a body of its own carries the API's error body.
      const error = Number(status) >= 400 && !r.schema && !r.contentType;
      responses[status] = response(error ? { ...r, schema: ErrorBodySchema } : r);
    }
    responses['4XX'] = response({
      description: 'refused: the error body, its codes from the catalogue (docs/api.md "Errors")',
      schema: ErrorBodySchema,
    });
    responses['5XX'] = response({
      description: 'a bug (500) or unavailable (503): the error body',
      schema: ErrorBodySchema,
    });
    paths[path] ??= {};
    paths[path][METHODS[route.method]] = {
      operationId: doc.operationId,
      summary: doc.summary,
      ...(doc.description ? { description: doc.description } : {}),
      tags: [doc.tag ?? route.path.split('/')[1] ?? 'box'],
      ...(params.length + query.length + headers.length > 0 ? { parameters: [...params, ...query, ...headers] } : {}),
      ...(route.schema?.body && route.body !== 'none' ? { requestBody: requestBody(route, route.schema.body) } : {}),
      responses,
      ...security(route),
    };
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/', description: setting.server }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: setting.bearer },
        clientBasic: { type: 'http', scheme: 'basic', description: CLIENT_BASIC },
      } satisfies Record<SecurityScheme, unknown>,
      schemas: Object.fromEntries([...components].map(([schema, name]) => [name, jsonSchema(schema)])),
    },
    security: [{ bearer: [] }],
  };
}

function responseObject(r: DocResponse, components: ReadonlyMap<TSchema, string>): Record<string, unknown> {
  const type = r.contentType ?? 'application/json';
  const name = r.schema && components.get(r.schema);
  const schema = name ? { $ref: `#/components/schemas/${name}` } : r.schema && jsonSchema(r.schema);
  return {
    description: r.description,
    ...(r.headers ? { headers: Object.fromEntries(r.headers.map((h) => [h, { schema: { type: 'string' } }])) } : {}),
    ...(r.schema || r.contentType ? { content: { [type]: { schema: schema ?? jsonSchema(Type.String()) } } } : {}),
  };
}

/**
 * Who may call the route: its doc's own alternatives (the token endpoint's client credentials, /metrics' staff
 * token or allowed address), else none for `auth: 'none'`, else the document's bearer token, with the role `write`
 * named where staff are needed (OpenAPI 3.1 lets a non-OAuth scheme list roles).
 */
function security(route: Route): Record<string, unknown> {
  if (route.doc?.security) return { security: route.doc.security };
  if (route.auth === 'none') return { security: [] };
  if (route.auth === 'write') return { security: [{ bearer: ['write'] }] };
  return {};
}

function requestBody(route: Route, schema: Parameters<typeof jsonSchema>[0]): Record<string, unknown> {
  const type =
    route.doc?.requestType ??
    (route.body === 'form'
      ? 'application/x-www-form-urlencoded'
      : route.body === 'raw'
        ? 'application/x-ndjson'
        : 'application/json');
  return { required: route.body !== 'optional-json', content: { [type]: { schema: jsonSchema(schema) } } };
}
