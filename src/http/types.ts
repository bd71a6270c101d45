import type { Static, TSchema } from '@sinclair/typebox';
import type { AppError } from '../shared/errors.js';

/** What a handler sees of a request: copied out of uWS at once, so it outlives the uWS callback. */
export interface HttpRequest {
  requestId: string;
  method: string;
  path: string;
  query: URLSearchParams;
  /** The query string as sent (without '?'): what a signed request's signature covers. */
  rawQuery: string;
  /** The peer's IP address as text ('' where unknown), for per-client limits. */
  remoteAddress: string;
  headers: Record<string, string>;
  params: Record<string, string>;
  /** The first path parameter whose percent-encoding is malformed (kept raw in `params`): a 400. */
  undecodable?: string;
  body: Buffer;
}

export interface Principal {
  tenantId: string;
  userId: string;
  scope: string[];
  staff: boolean;
  expMs: number;
  jti: string;
}

export interface Reply {
  status: number;
  body?: unknown;
  /** Pre-serialised body: the token endpoint's RFC 6749 shape, JSON already built, or text of the `content-type` in `headers`. */
  raw?: string;
  /**
   * Bytes sent as they are (an image), with the `content-type` in `headers`. `headers` may also set
   * `cache-control` (otherwise `no-store`); a 304 has no body.
   */
  bytes?: Buffer;
  headers?: Record<string, string>;
}

export type AuthMode = 'none' | 'bearer' | 'write';
/** 'raw': the body's bytes untouched (a sync batch is verified as received, never re-serialised). */
export type BodyMode = 'none' | 'json' | 'form' | 'optional-json' | 'raw';

export interface RouteContext<B extends TSchema = TSchema> {
  req: HttpRequest;
  /** Present on every route whose auth is not 'none'. */
  principal: Principal;
  /** Parsed JSON (for 'json' routes), form fields (for 'form' routes) or the Buffer (for 'raw' routes). */
  body: unknown;
  /**
   * `value` (the body by default) checked by the route's `schema.body`, compiled once when the route is mounted:
   * the typed value, or a 400 `invalidField` naming each failing field. The handler calls it when its own earlier
   * checks (the path's ids, the headers) are done.
   */
  valid(value?: unknown): Static<B>;
}

/**
 * A route's schemas, as Fastify's route `schema`: the one object that both validates (`valid()`) and documents
 * (/openapi.json) the route's body, and documents its query (each property a parameter, read by the handler).
 */
export interface RouteSchema<B extends TSchema = TSchema> {
  body?: B;
  query?: TSchema;
}

export interface Route<B extends TSchema = TSchema> {
  method: 'get' | 'post' | 'put' | 'patch' | 'del';
  path: string;
  auth: AuthMode;
  body: BodyMode;
  /**
   * Whether the route writes to the database: such routes are refused with 503 storageFull while the data disk
   * is full. Unset, every method but GET counts as a write (a POST that only reads may say `writes: false`).
   */
  writes?: boolean;
  /**
   * The route's own shape for an error raised around it (a full disk): the token endpoint keeps RFC 6749's
   * shape there too. Undefined: the API's error body.
   */
  errorReply?(err: AppError): Reply | undefined;
  /** Served while the box is stopping too (/healthz, /readyz); every other route then gets 503 unavailable. */
  whileStopping?: boolean;
  /** The body's and the query's schemas: what the route validates is what /openapi.json says. */
  schema?: RouteSchema<B>;
  /** What /openapi.json says of it besides its schemas (src/http/contracts/openapi.ts); every route has one. */
  doc?: RouteDoc;
  handle(ctx: RouteContext<B>): Reply | Promise<Reply>;
}

/** A route whose handler's `valid()` is typed by its body schema. */
export const route = <B extends TSchema>(r: Route<B>): Route => r as unknown as Route;

/** A route's contract besides its schemas: the source, with them, of /openapi.json and of /docs/api. */
export interface RouteDoc {
  summary: string;
  /** The operation's name in the contract (camelCase). */
  operationId?: string;
  description?: string;
  /** Groups the route in the documents; by default the path's first segment (`ordering-api`). */
  tag?: string;
  /** Path parameters (`:id`) and what they are. */
  params?: Record<string, string>;
  /** The body's media type where the body mode does not say it (a raw body that is JSON, signed as sent). */
  requestType?: string;
  /** Request headers the route reads, beyond Authorization. */
  headers?: { name: string; required: boolean; description: string }[];
  /** The answers, by status: a JSON body's schema, or another content type's. */
  responses: Record<number, DocResponse>;
}

export interface DocResponse {
  description: string;
  schema?: TSchema;
  /** Default `application/json`. */
  contentType?: string;
  /** Response headers worth naming (Retry-After, Allow). */
  headers?: string[];
}

export const json = (status: number, body: unknown, headers?: Record<string, string>): Reply => ({
  status,
  body,
  headers,
});
