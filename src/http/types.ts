import type { TSchema } from '@sinclair/typebox';
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

export interface RouteContext {
  req: HttpRequest;
  /** Present on every route whose auth is not 'none'. */
  principal: Principal;
  /** Parsed JSON (for 'json' routes), form fields (for 'form' routes) or the Buffer (for 'raw' routes). */
  body: unknown;
}

export interface Route {
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
  /** What /openapi.json says of it (src/http/contracts/openapi.ts); every route of the box has one. */
  doc?: RouteDoc;
  handle(ctx: RouteContext): Reply | Promise<Reply>;
}

/** A route's contract: the source of /openapi.json and of /docs/api. */
export interface RouteDoc {
  summary: string;
  description?: string;
  /** Groups the route in the documents; by default the path's first segment (`ordering-api`). */
  tag?: string;
  /** Path parameters (`:id`) and what they are. */
  params?: Record<string, string>;
  /** The query parameters, as an object schema (each property a parameter). */
  query?: TSchema;
  /** Request headers the route reads, beyond Authorization. */
  headers?: { name: string; required: boolean; description: string }[];
  /** The body's schema (JSON, or the form's fields for a form route). */
  request?: TSchema;
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
