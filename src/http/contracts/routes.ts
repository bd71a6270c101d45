import { Type } from '@sinclair/typebox';
import type { Route } from '../types.js';
import { asyncApiDocument } from './asyncapi.js';
import { renderAsyncApiHtml, renderOpenApiHtml } from './docs-html.js';
import { type ApiInfo, openApiDocument } from './openapi.js';

const Document = Type.Object({}, { additionalProperties: true, description: 'the document' });

/**
 * The box's contracts, served by the box itself (docs/api.md "Contracts: /openapi.json and /asyncapi.json"): OpenAPI
 * 3.1 made from `routes()`, the route list the box mounts (these four included), AsyncAPI 3 from the socket
 * protocol, and an HTML page of each. No token: they say what any client may call. Built once, at the first ask.
 */
export function contractRoutes(routes: () => readonly Route[], info: ApiInfo): Route[] {
  let texts: { openapi: string; asyncapi: string; api: string; socket: string } | undefined;
  const built = () => {
    if (!texts) {
      const openapi = openApiDocument(routes(), info);
      const asyncapi = asyncApiDocument(info);
      texts = {
        openapi: JSON.stringify(openapi),
        asyncapi: JSON.stringify(asyncapi),
        api: renderOpenApiHtml(openapi),
        socket: renderAsyncApiHtml(asyncapi),
      };
    }
    return texts;
  };
  const html = { 'content-type': 'text/html; charset=utf-8' };
  return [
    {
      method: 'get',
      path: '/openapi.json',
      auth: 'none',
      body: 'none',
      doc: {
        summary: 'This document: the HTTP API as OpenAPI 3.1',
        tag: 'contracts',
        responses: { 200: { description: 'OpenAPI 3.1', schema: Document } },
      },
      handle: () => ({ status: 200, raw: built().openapi }),
    },
    {
      method: 'get',
      path: '/asyncapi.json',
      auth: 'none',
      body: 'none',
      doc: {
        summary: 'The socket as AsyncAPI 3',
        tag: 'contracts',
        responses: { 200: { description: 'AsyncAPI 3.0', schema: Document } },
      },
      handle: () => ({ status: 200, raw: built().asyncapi }),
    },
    {
      method: 'get',
      path: '/docs/api',
      auth: 'none',
      body: 'none',
      doc: {
        summary: 'The HTTP API, as a page',
        tag: 'contracts',
        responses: { 200: { description: 'HTML', contentType: 'text/html' } },
      },
      handle: () => ({ status: 200, raw: built().api, headers: html }),
    },
    {
      method: 'get',
      path: '/docs/socket',
      auth: 'none',
      body: 'none',
      doc: {
        summary: 'The socket, as a page',
        tag: 'contracts',
        responses: { 200: { description: 'HTML', contentType: 'text/html' } },
      },
      handle: () => ({ status: 200, raw: built().socket, headers: html }),
    },
  ];
}
