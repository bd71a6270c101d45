import { Type } from '@sinclair/typebox';
import { expect, test } from 'vitest';
import type { Route } from '../types.js';
import { openApiDocument, openApiPath } from './openapi.js';

const info = { title: 't', version: '1', description: 'd' };
const route = (r: Partial<Route>): Route => ({
  method: 'get',
  path: '/x',
  auth: 'bearer',
  body: 'none',
  handle: () => ({ status: 200 }),
  ...r,
});

test('a route without its doc cannot be documented: the document is refused, never silently short', () => {
  expect(() => openApiDocument([route({ path: '/undocumented' })], info)).toThrow(/\/undocumented has no doc/);
});

test("path parameters, the query's properties and a RegExp schema come out as OpenAPI 3.1 takes them", () => {
  const doc = openApiDocument(
    [
      route({
        path: '/a/:id',
        auth: 'none',
        schema: { query: Type.Object({ q: Type.Optional(Type.String()) }) },
        doc: {
          operationId: 'getA',
          summary: 's',
          responses: { 200: { description: 'ok', schema: Type.Object({ id: Type.RegExp(/^\p{L}+$/u) }) } },
        },
      }),
    ],
    info,
  ) as { paths: Record<string, { get: Record<string, unknown> }> };
  expect(openApiPath('/a/:id/b/:c')).toBe('/a/{id}/b/{c}');
  const op = doc.paths['/a/{id}']!.get;
  expect(op.parameters).toEqual([
    { name: 'id', in: 'path', required: true, description: 'id', schema: { type: 'string' } },
    { name: 'q', in: 'query', required: false, schema: { type: 'string' } },
  ]);
  expect(op.security).toEqual([]);
  expect(JSON.stringify(op.responses)).toContain('{"type":"string","pattern":"^\\\\p{L}+$"}');
});

test('operationIds come from the docs, and two routes with one are refused: a client would get one method for both', () => {
  const doc = (operationId: string) => ({ operationId, summary: 's', responses: { 200: { description: 'ok' } } });
  const built = openApiDocument(
    [route({ path: '/a', doc: doc('getA') }), route({ path: '/b', doc: doc('getB') })],
    info,
  );
  expect((built.paths as Record<string, { get: { operationId: string } }>)['/b']!.get.operationId).toBe('getB');
  expect(() =>
    openApiDocument([route({ path: '/a', doc: doc('getA') }), route({ path: '/b', doc: doc('getA') })], info),
  ).toThrow(/operationId getA of \/b is also \/a's/);
});

test('an error answer without a body of its own refers to ErrorBody; a union of string literals is an enum', () => {
  const built = openApiDocument(
    [
      route({
        path: '/a',
        schema: { query: Type.Object({ c: Type.Union([Type.Literal('X'), Type.Literal('Y')]) }) },
        doc: {
          operationId: 'getA',
          summary: 's',
          responses: { 200: { description: 'ok' }, 409: { description: 'no' } },
        },
      }),
    ],
    info,
  ) as { paths: Record<string, { get: { responses: Record<string, unknown>; parameters: unknown[] } }> };
  const op = built.paths['/a']!.get;
  const errorBody = { content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } };
  expect(op.responses['409']).toMatchObject(errorBody);
  expect(op.responses['4XX']).toMatchObject(errorBody);
  expect(op.parameters).toEqual([
    { name: 'c', in: 'query', required: true, schema: { type: 'string', enum: ['X', 'Y'] } },
  ]);
});
