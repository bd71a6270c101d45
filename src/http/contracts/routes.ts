import { Type } from '@sinclair/typebox';
import type { Route } from '../types.js';
import { asyncApiDocument, socketHost } from './asyncapi.js';
import { renderAsyncApiHtml, renderOpenApiHtml } from './docs-html.js';
import { type ApiInfo, openApiDocument } from './openapi.js';

const Document = Type.Object({}, { additionalProperties: true, description: 'the document' });

const HTML = { 'content-type': 'text/html; charset=utf-8' };

/**
 * `/openapi.json` and its page, `/docs/api`, for the box and the central alike: the document is built once, at the
 * first ask, from the routes mounted by then. No token: they say what any client may call.
 */
export function openApiRoutes(document: () => Record<string, unknown>): Route[] {
  let texts: { json: string; page: string } | undefined;
  const built = () => {
    if (!texts) {
      const openapi = document();
      texts = { json: JSON.stringify(openapi), page: renderOpenApiHtml(openapi) };
    }
    return texts;
  };
  return [
    {
      method: 'get',
      path: '/openapi.json',
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'getOpenApiDocument',
        summary: 'This document: the HTTP API as OpenAPI 3.1',
        tag: 'contracts',
        responses: { 200: { description: 'OpenAPI 3.1', schema: Document } },
      },
      handle: () => ({ status: 200, raw: built().json }),
    },
    {
      method: 'get',
      path: '/docs/api',
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'getApiPage',
        summary: 'The HTTP API, as a page',
        tag: 'contracts',
        responses: { 200: { description: 'HTML', contentType: 'text/html' } },
      },
      handle: () => ({ status: 200, raw: built().page, headers: HTML }),
    },
  ];
}

/**
 * The box's contracts, served by the box itself (docs/api.md "Contracts: /openapi.json and /asyncapi.json"): OpenAPI
 * 3.1 made from `routes()`, the route list the box mounts (these four included), AsyncAPI 3 from the socket
 * protocol, and an HTML page of each.
 */
export function contractRoutes(routes: () => readonly Route[], info: ApiInfo): Route[] {
  let page: string | undefined;
  // The AsyncAPI text per Host it names (socketHost): a few kept, so that a client sending many cannot grow it.
  const texts = new Map<string, string>();
  const asyncApiJson = (hostHeader: string | undefined) => {
    const host = socketHost(hostHeader);
    let text = texts.get(host);
    if (text === undefined) {
      if (texts.size >= MAX_HOSTS) texts.clear();
      text = JSON.stringify(asyncApiDocument(info, host));
      texts.set(host, text);
    }
    return text;
  };
  return [
    ...openApiRoutes(() => openApiDocument(routes(), info)),
    {
      method: 'get',
      path: '/asyncapi.json',
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'getAsyncApiDocument',
        summary: 'The socket as AsyncAPI 3',
        tag: 'contracts',
        responses: { 200: { description: 'AsyncAPI 3.0', schema: Document } },
      },
      handle: ({ req }) => ({ status: 200, raw: asyncApiJson(req.headers.host) }),
    },
    {
      method: 'get',
      path: '/docs/socket',
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'getSocketPage',
        summary: 'The socket, as a page',
        tag: 'contracts',
        responses: { 200: { description: 'HTML', contentType: 'text/html' } },
      },
      handle: () => {
        page ??= renderAsyncApiHtml(asyncApiDocument(info));
        return { status: 200, raw: page, headers: HTML };
      },
    },
  ];
}

/** How many Host headers' AsyncAPI texts are kept at once. */
const MAX_HOSTS = 8;
