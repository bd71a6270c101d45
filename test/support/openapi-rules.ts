import { expect } from 'vitest';

/*
 * What a generated client relies on in an OpenAPI document, checked on the box's and the central's alike
 * (docs/api.md "Contracts: /openapi.json and /asyncapi.json"): operation names, error answers, typed queries.
 */

export interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  style?: string;
  explode?: boolean;
  schema: Record<string, unknown>;
}
export interface Operation {
  operationId?: string;
  summary?: string;
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
}
export interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
}

const operations = (openapi: OpenApi) =>
  Object.entries(openapi.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ where: `${method} ${path}`, method, path, op })),
  );

/** The name the document once derived from the method and path (`postOrderingApiApiOrderIdAppend`). */
const pathDerived = (method: string, path: string) =>
  method +
  path
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/** Every operation named in camelCase, once in the document, by what it does rather than by its path. */
export function expectOperationIds(openapi: OpenApi): void {
  const seen = new Map<string, string>();
  for (const { where, method, path, op } of operations(openapi)) {
    expect({ where, operationId: op.operationId }).toEqual({
      where,
      operationId: expect.stringMatching(/^[a-z][a-zA-Z0-9]*$/),
    });
    // A one-segment path may well give the apt name (`getMetrics`); a longer one gives `postOrderingApiApi...`.
    if (path.split('/').length > 2)
      expect({ where, operationId: op.operationId }).not.toEqual({ where, operationId: pathDerived(method, path) });
    expect({ where, alsoUsedBy: seen.get(op.operationId!) }).toEqual({ where, alsoUsedBy: undefined });
    seen.set(op.operationId!, where);
  }
}

/**
 * Every operation answers its errors with the ErrorBody component by `$ref` (its 4XX and 5XX ranges, and each 4xx or
 * 5xx it names), except where `ownShapes` lists `method path status` with a body of its own (RFC 6749's at the
 * token endpoint, a sync refusal's) that is a component too.
 */
export function expectErrorBodies(openapi: OpenApi, ownShapes: readonly string[] = []): void {
  expect(openapi.components.schemas).toHaveProperty('ErrorBody');
  const ERROR_BODY = { $ref: '#/components/schemas/ErrorBody' };
  for (const { where, op } of operations(openapi)) {
    for (const [status, answer] of Object.entries(op.responses)) {
      if (!/^[45]/.test(status)) continue;
      const schema = answer.content?.['application/json']?.schema;
      const own = ownShapes.includes(`${where} ${status}`) || ownShapes.includes(where);
      if (own && status !== '4XX' && status !== '5XX') {
        expect({ where, status, schema }).toEqual({
          where,
          status,
          schema: { $ref: expect.stringMatching(/^#\/components\/schemas\//) },
        });
      } else {
        expect({ where, status, schema }).toEqual({ where, status, schema: ERROR_BODY });
      }
    }
  }
}

/** Every query parameter typed as its values are: a number, an integer, an enum, a list, or text with a rule. */
export function expectDocumentedQueries(openapi: OpenApi): void {
  for (const { where, op } of operations(openapi)) {
    for (const p of (op.parameters ?? []).filter((q) => q.in === 'query')) {
      const { type } = p.schema;
      expect({ where, name: p.name, type }).toEqual({
        where,
        name: p.name,
        type: expect.stringMatching(/^(string|number|integer|array)$/),
      });
      const ruled = ['enum', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'items'].some(
        (k) => k in p.schema,
      );
      expect({ where, name: p.name, ruled }).toEqual({ where, name: p.name, ruled: true });
      if (type === 'array')
        expect({ where, name: p.name, explode: p.explode }).toEqual({ where, name: p.name, explode: false });
    }
  }
}
