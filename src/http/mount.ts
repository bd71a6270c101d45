import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse, TemplatedApp } from 'uWebSockets.js';
import type { Logger } from '../log.js';
import { AppError, errorBody, forbidden, invalidField } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { parseJson } from '../shared/validate.js';
import { statusLine } from './status-text.js';
import type { HttpRequest, Principal, Reply, Route } from './types.js';

export interface HttpDeps {
  log: Logger;
  maxBodyBytes: number;
  /** Verifies the bearer token of a request; throws a 401 AppError. */
  authenticate(req: HttpRequest): Principal;
  /** False while the box is shutting down: new requests get a 503. */
  accepting(): boolean;
}

/** The only place that touches uWS requests and responses: copy, read the body, run the route, reply. */
export function mountRoutes(app: TemplatedApp, routes: Route[], deps: HttpDeps): void {
  for (const route of routes) {
    const names = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    app[route.method](route.path, (res, req) => serve(res, copyRequest(req, names, res), route, deps));
  }
  app.any('/*', (res, req) => {
    const input = copyRequest(req, [], res);
    serve(res, input, undefined, deps);
  });
}

export function copyRequest(req: UwsRequest, paramNames: string[], res?: UwsResponse): HttpRequest {
  const headers: Record<string, string> = {};
  req.forEach((key, value) => {
    headers[key] = value;
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

function serve(res: UwsResponse, input: HttpRequest, route: Route | undefined, deps: HttpDeps): void {
  let aborted = false;
  let closeAfter = false;
  res.onAborted(() => {
    aborted = true;
  });
  readBody(res, input, deps.maxBodyBytes)
    .then((body) => {
      input.body = body;
      if (!route) throw AppError.of('notFound', `no route for ${input.method} ${input.path}`);
      if (!deps.accepting()) throw AppError.of('unavailable', 'venue-box is shutting down');
      return run(route, input, deps);
    })
    .catch((err: unknown) => {
      if (err instanceof BodyTooLarge && !err.drained) closeAfter = true;
      return toErrorReply(err, input, deps.log);
    })
    .then((reply) => {
      if (!aborted) res.cork(() => writeReply(res, reply, input.requestId, closeAfter));
    })
    .catch((err: unknown) => deps.log.error({ err, requestId: input.requestId }, 'writing a reply failed'));
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
  const declared = Number(input.headers['content-length'] ?? '0');
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
    super(413, message, [{ code: 'payloadTooLarge', message, args: [] }]);
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
      throw forbidden('this operation needs scope write');
    }
  }
  if (req.undecodable) {
    throw invalidField(req.undecodable, `path parameter ${req.undecodable} is not valid percent-encoding`);
  }
  return route.handle({ req, principal, body: parseBody(route, req) });
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
  if (!/^application\/(.+\+)?json\s*(;|$)/i.test(type)) {
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
      codes: [{ code: 'internal', message: 'internal error', args: [req.requestId] }],
    },
  };
}

function writeReply(res: UwsResponse, reply: Reply, requestId: string, close: boolean): void {
  res.writeStatus(statusLine(reply.status));
  res.writeHeader('content-type', 'application/json; charset=utf-8');
  res.writeHeader('x-request-id', requestId);
  res.writeHeader('cache-control', 'no-store');
  for (const [key, value] of Object.entries(reply.headers ?? {})) res.writeHeader(key, value);
  res.end(reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body)), close);
}
