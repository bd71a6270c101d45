import type { TSchema } from '@sinclair/typebox';
import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse, TemplatedApp } from 'uWebSockets.js';
import type { Logger } from '../log.js';
import { refuseNul } from './nul.js';
import { deriveClientAddress, type ForwardedHeader } from './client-address.js';
import type { AddressList } from '../shared/addresses.js';
import { isStorageFull, storageFullError } from '../db/storage-full.js';
import { AppError, errorBody, forbidden, insufficientScope, invalidField, problem, STATUS } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { compile, parseJson, type Validator } from '../shared/validate.js';
import { queryValidator } from './contracts/query.js';
import { statusLine } from './status-text.js';
import type { HttpRequest, Principal, Reply, Route } from './types.js';

export interface HttpDeps {
  log: Logger;
  maxBodyBytes: number;
  /** Verifies the bearer token of a request; throws a 401 AppError. */
  authenticate(req: HttpRequest): Principal;
  /** False while the box is shutting down: new requests get a 503. */
  accepting(): boolean;
  /** What a request that arrives while stopping is told: the message and the seconds to wait (Retry-After). */
  stopping?: { message: string; retryAfterSeconds(): number | undefined };
  /** The data disk's free-space guard (src/modules/storage/disk-watchdog.ts); absent: never refuses. */
  storage?: { full(): boolean; noteFull(): void };
  /** Origins whose browser pages may call the API (`http.corsOrigins`); absent or empty: none. */
  corsOrigins?: readonly string[];
  /**
   * Refuse a NUL character in path parameters, query values and JSON strings with a 400 naming where it is: the
   * central's PostgreSQL cannot store one in text (a box's SQLite can), and would fail the statement as a 500.
   */
  refuseNul?: boolean;
  /** A failure that is not a bug, as the AppError to answer (the central's database busy or away: a 503). */
  expectedError?(err: unknown): AppError | undefined;
  /** Proxies whose forwarding headers name the client (src/http/client-address.ts); absent: the peer is. */
  trustedProxies?: AddressList;
  /** The one forwarding header those proxies write; default `x-forwarded-for`. */
  forwardedHeader?: ForwardedHeader;
}

/**
 * The only place that touches uWS requests and responses: copy, read the body, run the route, reply.
 * `otherPaths` are paths served outside these routes (the socket's GET), so that a wrong method there is a 405
 * too.
 */
export function mountRoutes(
  app: TemplatedApp,
  routes: Route[],
  deps: HttpDeps,
  otherPaths: Pick<Route, 'method' | 'path'>[] = [],
): void {
  const framing = createFramingCheck();
  const serveChecked = (res: UwsResponse, input: HttpRequest, route: Route | undefined) => {
    const problem = framing.problem(input);
    if (!problem) {
      // After the framing check, which is about the connection's peer, not whom a proxy forwards for.
      deriveClientAddress(input, deps);
      return serveRoute(res, input, route, deps);
    }
    // Answered inside uWS's callback, so the 400 goes out with this read (an await would let uWS parse on first),
    // and the connection is closed after it.
    const reply = toErrorReply(AppError.of('invalidBody', problem), input, deps.log);
    res.cork(() => writeReply(res, reply, input.requestId, true));
  };
  const allowed = allowedMethods([...routes, ...otherPaths]);
  for (const route of routes) {
    if (route.schema?.body) validatorOf(route);
    if (route.schema?.query) queryValidator(route.schema.query);
    const names = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    // A path that a more specific route of another method also matches belongs to that route (docs/api.md "The
    // API": `POST order/new` is not the order `new` of `GET order/:id`): there this route's method is a 405.
    const shadowed = allowed.shadows(route);
    const serve = (res: UwsResponse, req: UwsRequest) => {
      const input = copyRequest(req, names, res);
      const allow = shadowed ? allowed.shadowedAt(route, input.path) : undefined;
      serveChecked(res, input, allow === undefined ? route : methodNotAllowed(allow));
    };
    app[route.method](route.path, serve);
    // RFC 9110 9.3.2: HEAD is GET without the body (the same status and headers, Content-Length included).
    if (route.method === 'get') app.head(route.path, serve);
  }
  app.any('/*', (res, req) => {
    const input = copyRequest(req, [], res);
    const allow = allowed.allow(input.path);
    // A method the path is served with that still lands here (a GET of the socket without an upgrade) stays 404.
    const route =
      allow === undefined
        ? undefined
        : input.method === 'OPTIONS' || !allow.split(', ').includes(input.method)
          ? methodNotAllowed(allow)
          : undefined;
    serveChecked(res, input, route);
  });
}

/** Request headers a page may send (the token endpoint's x-tenant, the warehouse's x-user included). */
const CORS_REQUEST_HEADERS = 'Authorization, Content-Type, Idempotency-Key, x-tenant, x-user';
/** Response headers a page may read besides the simple ones. */
const CORS_EXPOSED_HEADERS = 'Retry-After, WWW-Authenticate, x-request-id, Allow';
const CORS_MAX_AGE_SECONDS = '600';

/**
 * CORS (docs/api.md "Browsers on another origin (CORS)"): a reply to a page of an allowed origin says so
 * (Access-Control-Allow-Origin with that origin, Vary: Origin), and a preflight (OPTIONS, answered 204 by
 * methodNotAllowed) also names the methods, the request headers and how long to remember them. A reply to
 * any other origin gets no CORS header, so the browser withholds it from the page (and never sends a request
 * that needed a preflight). No credentials mode: the API takes bearer tokens, not cookies.
 */
function withCors(reply: Reply, req: HttpRequest, origins: readonly string[] | undefined): Reply {
  const origin = req.headers.origin;
  if (origin === undefined || !origins?.includes(origin)) return reply;
  const headers: Record<string, string> = { ...reply.headers, 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
  if (req.method === 'OPTIONS' && reply.status === 204) {
    headers['Access-Control-Allow-Methods'] = reply.headers?.Allow ?? '';
    headers['Access-Control-Allow-Headers'] = CORS_REQUEST_HEADERS;
    headers['Access-Control-Max-Age'] = CORS_MAX_AGE_SECONDS;
  } else {
    headers['Access-Control-Expose-Headers'] = CORS_EXPOSED_HEADERS;
  }
  return { ...reply, headers };
}

const METHOD_NAMES: Record<Route['method'], string> = {
  get: 'GET',
  post: 'POST',
  put: 'PUT',
  patch: 'PATCH',
  del: 'DELETE',
};

/**
 * The methods a path is served with (`Allow`, RFC 9110 10.2.1). Where routes of several shapes match a path, the
 * most specific shape owns it, as a router picks a literal segment over a parameter: `/order/new` is `POST
 * /order/new`'s path (`Allow: POST, OPTIONS`), not also an order id of `GET /order/:id`.
 */
function allowedMethods(routes: Pick<Route, 'method' | 'path'>[]) {
  const patterns = routes.map((r) => {
    const segments = r.path.split('/');
    return {
      method: METHOD_NAMES[r.method],
      path: r.path,
      segments,
      // '1' a literal segment, '0' a parameter: among shapes of one length, the greater string is more specific.
      rank: segments.map((s) => (s.startsWith(':') ? '0' : '1')).join(''),
      pattern: new RegExp(
        `^${segments.map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`,
      ),
    };
  });
  /** The routes of the most specific shape that matches the path (none: a path no route knows). */
  const owners = (path: string) => {
    const matching = patterns.filter((p) => p.pattern.test(path));
    const best = matching
      .map((p) => p.rank)
      .sort()
      .at(-1);
    return matching.filter((p) => p.rank === best);
  };
  const allow = (path: string): string | undefined => {
    const methods = new Set(owners(path).map((p) => p.method));
    if (methods.size === 0) return undefined;
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods, 'OPTIONS'].join(', ');
  };
  return {
    allow,
    /** Whether a more specific shape can match some of the route's paths (most routes: no, and no check then). */
    shadows: (route: Pick<Route, 'path'>): boolean => {
      const own = patterns.find((p) => p.path === route.path)!;
      const overlap = (p: (typeof patterns)[number]) =>
        p.segments.length === own.segments.length &&
        p.segments.every((s, i) => s === own.segments[i] || s.startsWith(':') || own.segments[i]!.startsWith(':'));
      return patterns.some((p) => p.rank > own.rank && overlap(p));
    },
    /** `Allow` of the path when a more specific shape than the route's owns it, else undefined. */
    shadowedAt: (route: Pick<Route, 'path'>, path: string): string | undefined =>
      owners(path).some((p) => p.path === route.path) ? undefined : allow(path),
  };
}

/**
 * The route of a known path asked with a method it does not take: OPTIONS is answered 204 with `Allow` (RFC
 * 9110 9.3.7, and a CORS preflight where allowed), any other method 405 with `Allow` (RFC 9110 15.5.6).
 */
function methodNotAllowed(allow: string): Route {
  return {
    method: 'get',
    path: '',
    auth: 'none',
    body: 'none',
    writes: false,
    handle: ({ req }) => {
      if (req.method === 'OPTIONS') return { status: 204, headers: { Allow: allow } };
      const message = `${req.method} is not allowed on ${req.path} (allowed: ${allow})`;
      throw AppError.of('methodNotAllowed', message, [req.method], { Allow: allow });
    },
  };
}

export function copyRequest(req: UwsRequest, paramNames: string[], res?: UwsResponse): HttpRequest {
  // uWS yields each field line, a repeated field once per line (names lower-cased, values trimmed). Repeats are
  // joined into one comma-separated value as RFC 9110 section 5.3 allows: a list field reads the same either
  // way, and a field that must appear once (Authorization, Idempotency-Key, Content-Length) sent twice with
  // different values reads as invalid instead of as its last copy.
  const headers: Record<string, string> = {};
  req.forEach((key, value) => {
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
  });
  const params: Record<string, string> = {};
  let undecodable: string | undefined;
  paramNames.forEach((name, i) => {
    const text = req.getParameter(i) ?? '';
    // decodeURIComponent throws on a malformed escape ("%E0%A4%A"); a throw here would go into uWS and
    // kill the process, so the parameter is kept raw and the request refused with a 400 later.
    try {
      params[name] = decodeURIComponent(text);
    } catch {
      params[name] = text;
      undecodable ??= name;
    }
  });
  return {
    requestId: newId(),
    method: req.getMethod().toUpperCase(),
    path: req.getUrl(),
    query: new URLSearchParams(req.getQuery() ?? ''),
    rawQuery: req.getQuery() ?? '',
    remoteAddress: res ? Buffer.from(res.getRemoteAddressAsText()).toString('utf8') : '',
    headers,
    params,
    undecodable,
    body: Buffer.alloc(0),
  };
}

function serveRoute(res: UwsResponse, input: HttpRequest, route: Route | undefined, deps: HttpDeps): void {
  let aborted = false;
  let closeAfter = false;
  res.onAborted(() => {
    aborted = true;
  });
  readBody(res, input, deps.maxBodyBytes)
    .then((body) => {
      input.body = body;
      if (!route) throw AppError.of('notFound', `no route for ${input.method} ${input.path}`);
      if (!deps.accepting() && !route.whileStopping) throw stoppingError(deps);
      // Refused before SQLite fails mid-write: the client learns "retry later", and reads go on serving.
      if ((route.writes ?? route.method !== 'get') && deps.storage?.full()) throw storageFullError();
      return run(route, input, deps);
    })
    .catch((err: unknown) => {
      if (err instanceof BodyTooLarge && !err.drained) closeAfter = true;
      if (isStorageFull(err)) {
        // The disk filled between two looks (or below the floor's estimate): the write rolled back, nothing
        // was confirmed; the guard refuses the next writes at once.
        deps.storage?.noteFull();
        err = storageFullError();
      }
      if (!(err instanceof AppError)) err = deps.expectedError?.(err) ?? err;
      return (err instanceof AppError && route?.errorReply?.(err)) || toErrorReply(err, input, deps.log);
    })
    .then((reply) => {
      const answer = withCors(reply, input, deps.corsOrigins);
      if (!aborted) res.cork(() => writeReply(res, answer, input.requestId, closeAfter, input.method === 'HEAD'));
    })
    .catch((err: unknown) => {
      // A reply that cannot be written (a body too large to serialise) still answers: a 500, or at the least
      // a closed connection, never a client left waiting.
      deps.log.error({ err, requestId: input.requestId }, 'writing a reply failed');
      if (aborted) return;
      try {
        res.cork(() =>
          writeReply(res, toErrorReply(new Error('reply not writable'), input, deps.log), input.requestId, true),
        );
      } catch {
        res.close();
      }
    });
}

/**
 * RFC 9112 section 6.3: a request whose body length is ambiguous gets a 400 and its connection is closed. uWS
 * frames the body by the first Content-Length line alone and parses whatever follows as the next request, so a
 * second, different Content-Length (which a proxy in front may have used instead) would let a request be
 * smuggled past that proxy. uWS itself answers 400 and closes the connection when the first line's value is
 * not digits (a comma list, a sign) or Transfer-Encoding comes with Content-Length; what reaches us is checked
 * here. Copies with the same value are accepted (section 6.3 allows it).
 *
 * Closing is not enough by itself: after our reply uWS goes on parsing the bytes it already holds, in the same
 * synchronous run, and would serve a request smuggled behind the body (measured with uws 20.30; `res.close()`
 * would stop it but throws the 400 away). uWS gives JS no connection identity, so until that run ends every
 * request from the same address is refused the same way. A request of another connection from that address
 * arriving in the same microseconds is refused with them: a rare false positive that fails safe.
 */
function createFramingCheck() {
  const refused = new Set<string>();
  return {
    problem(input: HttpRequest): string | undefined {
      if (refused.has(input.remoteAddress)) return 'request follows one with an ambiguous Content-Length';
      const problem = framingProblem(input.headers);
      if (problem) {
        if (refused.size === 0) setImmediate(() => refused.clear());
        refused.add(input.remoteAddress);
      }
      return problem;
    },
  };
}

function framingProblem(headers: Record<string, string>): string | undefined {
  const length = headers['content-length'];
  if (length === undefined) return undefined;
  if (headers['transfer-encoding'] !== undefined) return 'Content-Length and Transfer-Encoding together';
  const values = length.split(',').map((v) => v.trim().replace(/^0+(?=\d)/, ''));
  if (!values.every((v) => /^\d+$/.test(v))) return 'Content-Length is not a number';
  if (values.some((v) => v !== values[0])) return 'conflicting Content-Length values';
  return undefined;
}

/**
 * Reads the body (at most `max` bytes kept). An oversized body is still read to its end and thrown away, up
 * to DRAIN_FACTOR x max, before the 413 goes out: answering mid-upload and closing makes the client's
 * next write fail (EPIPE/RST), and most clients then report that instead of the 413. Past that bound the
 * 413 is sent at once and the connection closed, so nobody can make the box read without end.
 */
function readBody(res: UwsResponse, input: HttpRequest, max: number): Promise<Buffer> {
  if (input.method === 'GET' || input.method === 'HEAD') return Promise.resolve(Buffer.alloc(0));
  const drainLimit = max * DRAIN_FACTOR;
  // Repeated copies are equal by now (framingProblem): the first one is the length.
  const declared = Number(input.headers['content-length']?.split(',')[0] ?? '0');
  if (declared > drainLimit) return Promise.reject(new BodyTooLarge(max, false));
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    res.onData((chunk, isLast) => {
      if (settled) return;
      size += chunk.byteLength;
      if (size > drainLimit) {
        settled = true;
        reject(new BodyTooLarge(max, false));
        return;
      }
      // uWS reuses the chunk's memory after this callback; past `max` nothing is kept.
      if (size <= max) chunks.push(Buffer.from(chunk.slice(0)));
      else chunks = [];
      if (!isLast) return;
      settled = true;
      if (size > max) reject(new BodyTooLarge(max, true));
      else resolve(Buffer.concat(chunks, size));
    });
  });
}

const DRAIN_FACTOR = 4;

/** 413; `drained` when the whole body was read, so the connection can stay open. */
class BodyTooLarge extends AppError {
  constructor(
    max: number,
    readonly drained: boolean,
  ) {
    const message = `body is larger than ${max} bytes`;
    super(STATUS.payloadTooLarge, message, [problem('payloadTooLarge', message)]);
  }
}

async function run(route: Route, req: HttpRequest, deps: HttpDeps): Promise<Reply> {
  const principal = route.auth === 'none' ? (undefined as unknown as Principal) : deps.authenticate(req);
  if (principal) {
    const tenantHeader = req.headers['x-tenant'];
    if (tenantHeader !== undefined && tenantHeader !== principal.tenantId) {
      throw forbidden('x-tenant differs from the token tenant');
    }
    if (route.auth === 'write' && !principal.scope.includes('write')) {
      throw insufficientScope('write', 'this operation needs scope write');
    }
  }
  if (req.undecodable) {
    throw invalidField(req.undecodable, `path parameter ${req.undecodable} is not valid percent-encoding`);
  }
  const body = parseBody(route, req);
  if (deps.refuseNul) refuseNul(req, route.body === 'json' || route.body === 'optional-json' ? body : undefined);
  // The query's schema is its check (src/http/contracts/query.ts): what /openapi.json allows is what is taken.
  const query = route.schema?.query ? queryValidator(route.schema.query)(req.query) : undefined;
  return route.handle({ req, principal, body, query, valid: (value: unknown = body) => validatorOf(route)(value) });
}

/**
 * The check of a route's `schema.body`, compiled once per schema object (src/shared/validate.ts): the very object
 * /openapi.json documents is the one that validates. Compiled at mount (mountRoutes), so a schema TypeBox cannot
 * compile fails the start, not a request.
 */
const validators = new WeakMap<TSchema, Validator<TSchema>>();
export function validatorOf(route: Pick<Route, 'method' | 'path' | 'schema'>): Validator<TSchema> {
  const schema = route.schema?.body;
  if (!schema) throw new Error(`route ${route.method} ${route.path} has no body schema to validate with`);
  const known = validators.get(schema);
  if (known) return known;
  const validator = compile(schema);
  validators.set(schema, validator);
  return validator;
}

function parseBody(route: Route, req: HttpRequest): unknown {
  if (route.body === 'none') return undefined;
  if (route.body === 'form') return new URLSearchParams(req.body.toString('utf8'));
  if (route.body === 'raw') return req.body;
  if (req.body.length === 0) {
    if (route.body === 'optional-json') return undefined;
    throw AppError.of('invalidBody', 'a JSON body is required');
  }
  const type = req.headers['content-type'] ?? '';
  // application/json or a +json type, but not a patch format: a JSON Merge Patch (RFC 7396) or JSON Patch (RFC
  // 6902) document asks for its own semantics (`null` removes a field), which no route applies (docs/api.md "Errors").
  if (
    !/^application\/(.+\+)?json\s*(;|$)/i.test(type) ||
    /^application\/(merge-patch|json-patch)\+json\b/i.test(type)
  ) {
    throw AppError.of('unsupportedMediaType', 'body must be application/json');
  }
  return parseJson(req.body.toString('utf8'));
}

export function toErrorReply(err: unknown, req: HttpRequest, log: Logger): Reply {
  if (err instanceof AppError) return { status: err.status, body: errorBody(err), headers: err.headers };
  log.error({ err, requestId: req.requestId, method: req.method, path: req.path }, 'request failed');
  return {
    status: 500,
    body: {
      message: `internal error (request ${req.requestId})`,
      codes: [problem('internal', 'internal error', [req.requestId])],
    },
  };
}

/** The token endpoint (src/http/token-route.ts) answers in RFC 6749's shape, also when refused here. */
/** 503 while stopping, with the Retry-After the composition root chose (none by default). */
function stoppingError(deps: HttpDeps): AppError {
  const err = AppError.of('unavailable', deps.stopping?.message ?? 'venue-box is shutting down');
  const seconds = deps.stopping?.retryAfterSeconds();
  return seconds === undefined ? err : err.withHeaders({ 'Retry-After': String(seconds) });
}

function writeReply(res: UwsResponse, reply: Reply, requestId: string, close: boolean, head = false): void {
  // Serialised before anything is written: if it throws, nothing of this reply went out and a 500 can. As UTF-8
  // bytes, never a string: uWS writes a string whose characters all fit in one byte (é, ó: "Kraków") as Latin-1
  // (docs/architecture.md "Runtime and native addons").
  const text = reply.bytes ?? reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
  const body = typeof text === 'string' ? Buffer.from(text) : text;
  const empty = reply.status === 204 || reply.status === 304;
  res.writeStatus(statusLine(reply.status));
  const {
    'content-type': contentType = 'application/json; charset=utf-8',
    'cache-control': cacheControl = 'no-store',
    ...headers
  } = reply.headers ?? {};
  if (!empty) res.writeHeader('content-type', contentType);
  res.writeHeader('x-request-id', requestId);
  res.writeHeader('cache-control', cacheControl);
  for (const [key, value] of Object.entries(headers)) res.writeHeader(key, value);
  // HEAD: the GET's headers and Content-Length, no body.
  if (head && !empty) res.endWithoutBody(body.length, close);
  else if (empty) res.endWithoutBody(undefined, close);
  else res.end(body, close);
}
