import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

/*
 * Real answers and frames checked against the box's own contracts (docs/api.md "Contracts: /openapi.json and
 * /asyncapi.json"): the response schema /openapi.json gives for the route and status, the message schema
 * /asyncapi.json gives for the frame's type. A field the box sends that the document does not describe, or one
 * of the wrong type, fails the test.
 */

type Json = Record<string, unknown>;

export interface ContractChecker {
  /**
   * Checks a response's JSON body against the document's schema for `method` and the route's path template
   * (`/ordering-api/api/order/{id}`); returns the body.
   */
  response(method: string, pathTemplate: string, status: number, body: unknown): unknown;
  /** Reads a fetch Response's JSON and checks it (as `response`); returns the body. */
  json(method: string, pathTemplate: string, res: Response): Promise<unknown>;
  /** As `response`, for a concrete path (`/warehouse-api/api/warehouse/<id>/stock?x=1`): its template is looked up. */
  matching(method: string, path: string, status: number, body: unknown): unknown;
  /** Checks a socket frame against the AsyncAPI message of its type. */
  frame(frame: { type: string; seq?: number; payload?: unknown }): void;
}

const checkers = new Map<string, Promise<ContractChecker>>();

/** The checker of a box or a central (its documents fetched once). */
export function contractsOf(box: { url(path: string): string }): Promise<ContractChecker> {
  const key = box.url('/');
  let checker = checkers.get(key);
  if (!checker) {
    checker = load(box);
    checkers.set(key, checker);
  }
  return checker;
}

async function load(box: { url(path: string): string }): Promise<ContractChecker> {
  const openapi = (await (await fetch(box.url('/openapi.json'))).json()) as Json;
  // The central has no socket, so no /asyncapi.json: its checker knows no frames.
  const asyncapiRes = await fetch(box.url('/asyncapi.json'));
  const asyncapi = (asyncapiRes.ok ? await asyncapiRes.json() : { components: { messages: {} } }) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction>();
  // Answers refer to the document's components (`$ref: '#/components/schemas/ErrorBody'`): a schema compiled alone
  // gets them inlined (they are not recursive).
  const components = ((openapi.components as Json | undefined)?.schemas ?? {}) as Json;
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (node === null || typeof node !== 'object') return node;
    const target = (node as Json).$ref;
    if (typeof target === 'string' && target.startsWith('#/components/schemas/'))
      return inline(components[target.slice('#/components/schemas/'.length)]);
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inline(v)]));
  };
  const compile = (key: string, schema: unknown): ValidateFunction => {
    let v = compiled.get(key);
    if (!v) {
      v = ajv.compile(inline(schema) as Json);
      compiled.set(key, v);
    }
    return v;
  };
  const check = (v: ValidateFunction, value: unknown, what: string) => {
    if (!v(value))
      expect.fail(
        `${what} does not match its contract: ${ajv.errorsText(v.errors)}\n${JSON.stringify(value).slice(0, 2000)}`,
      );
  };
  const messages = (asyncapi.components as Json).messages as Record<string, Json>;
  const checker: ContractChecker = {
    response(method, pathTemplate, status, body) {
      const op = (openapi.paths as Record<string, Record<string, Json>>)[pathTemplate]?.[method.toLowerCase()];
      if (!op) expect.fail(`/openapi.json has no ${method} ${pathTemplate}`);
      const responses = op.responses as Record<string, Json>;
      const r = responses[String(status)] ?? responses[`${String(status)[0]}XX`];
      if (!r) expect.fail(`/openapi.json has no ${status} for ${method} ${pathTemplate}`);
      const schema = (r.content as Record<string, Json> | undefined)?.['application/json']?.schema;
      if (!schema) expect.fail(`/openapi.json gives no JSON schema for ${status} of ${method} ${pathTemplate}`);
      check(compile(`${method} ${pathTemplate} ${status}`, schema), body, `${status} of ${method} ${pathTemplate}`);
      return body;
    },
    matching(method, path, status, body) {
      const bare = path.split('?')[0]!;
      const templates = Object.keys(openapi.paths as Json);
      // A template without parameters first (`/locks/packets` before `/{kind}`-like ones), then by pattern.
      const template =
        templates.find((t) => t === bare) ??
        templates.find((t) =>
          new RegExp(`^${t.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(bare),
        );
      if (template) return checker.response(method, template, status, body);
      // An unknown path is answered with the error body too.
      if (status !== 404) expect.fail(`/openapi.json has no path for ${path}`);
      check(compile('ErrorBody', ((openapi.components as Json).schemas as Json).ErrorBody), body, `404 of ${path}`);
      return body;
    },
    async json(method, pathTemplate, res) {
      return checker.response(method, pathTemplate, res.status, await res.json());
    },
    frame(frame) {
      const message = messages[frame.type];
      if (!message) expect.fail(`/asyncapi.json has no message ${frame.type}`);
      check(compile(`frame ${frame.type}`, message.payload), frame, `frame ${frame.type}`);
    },
  };
  return checker;
}
