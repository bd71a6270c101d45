import SwaggerParser from '@apidevtools/swagger-parser';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { jsonSchema } from '../src/http/contracts/json-schema.js';
import { HqDocumentBody } from '../src/shared/hq-inbox.js';
import {
  BatchHeader,
  EnrolRequest,
  ENVELOPE_KINDS,
  HelloRequest,
  StandbyLeaseRequest,
  TailResponse,
} from '../src/shared/sync-messages.js';
import { CENTRAL_DEMO, startTestCentral, type TestCentral } from './support/central.js';
import { contractsOf } from './support/contracts.js';
import { SimDevice } from './support/sim-device.js';
import { enrolledDevice } from './support/sim-device.js';
import { expectApiError } from './support/fixtures.js';
import {
  expectDocumentedQueries,
  expectErrorBodies,
  expectOperationIds,
  type OpenApi,
} from './support/openapi-rules.js';

// The central's contract (docs/sync.md "API"): a valid OpenAPI 3.1 document made from the routes
// the central mounts, each route's request schema the very one it validates with, the sync protocol's messages
// among its schemas.
type Operation = {
  summary?: string;
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, unknown>;
};
let central: TestCentral;
let openapi: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };
beforeAll(async () => {
  // A central whose console directory is empty: the API alone (the console's files: test/central-console-api.test.ts).
  central = await startTestCentral({ args: ['--console-dir', mkdtempSync(join(tmpdir(), 'vb-no-console-'))] });
  openapi = (await (await fetch(central.url('/openapi.json'))).json()) as typeof openapi;
});
afterAll(() => central?.stop());

const SOME_UUID = '00000000-0000-4000-8000-000000000000';
const operations = () =>
  Object.entries(openapi.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );
/** Answers with a body of their own (a component too): RFC 6749's, a sync conflict's, a refused lease's. */
const OWN_ERROR_SHAPES = [
  'post /auth-oauth2/oauth/token',
  'post /auth-oauth2/tenants/{tenant}/oauth/token',
  'post /sync-api/api/batches 409',
  'post /sync-api/api/standby/lease 409',
];
const requestSchema = (method: string, path: string) =>
  Object.values(openapi.paths[path]![method]!.requestBody!.content)[0]!.schema;

describe("the central's /openapi.json", () => {
  test('is a valid OpenAPI 3.1 document, every operation with a summary and a 2xx answer', async () => {
    expect(openapi).toMatchObject({ openapi: '3.1.0', info: { title: 'venue-box central' } });
    await expect(SwaggerParser.validate(structuredClone(openapi) as never)).resolves.toBeTruthy();
    for (const { path, method, op } of operations()) {
      expect({ path, method, summary: op.summary }).toMatchObject({ summary: expect.stringMatching(/\S/) });
      expect(Object.keys(op.responses).some((s) => /^2\d\d$/.test(s))).toBe(true);
    }
  });

  test("documents the boxes' sync routes and headquarters' API", () => {
    const documented = new Set(operations().map((o) => `${o.method} ${o.path}`));
    for (const op of [
      'post /sync-api/api/enrol',
      'post /sync-api/api/hello',
      'post /sync-api/api/batches',
      'get /sync-api/api/events',
      'get /sync-api/api/catalogue',
      'post /sync-api/api/standby/lease',
      'post /auth-oauth2/oauth/token',
      'get /hq-api/api/orders',
      'put /hq-api/api/venues/{id}',
      'post /hq-api/api/venues/{venueId}/documents',
      'post /hq-api/api/orders',
      'get /hq-api/api/devices',
      'get /hq-app/bootstrap',
      'post /hq-api/api/enrol-codes',
      'post /hq-api/api/devices/{id}/revoke',
      'patch /hq-api/api/products/{productId}/price',
      'get /hq-api/api/stock-documents/{id}',
      'get /hq-api/api/catalogue/status',
      'get /hq-api/api/reports/sales',
      'get /hq-api/api/reports/products',
      'get /hq-api/api/reports/channels',
      'get /hq-api/api/reports/kitchen',
      'get /hq-api/api/dashboard',
      'get /openapi.json',
    ]) {
      expect(documented).toContain(op);
    }
  });

  test("the request schemas are the protocol's and the shared ones, as the routes validate with them", () => {
    expect(requestSchema('post', '/sync-api/api/enrol')).toEqual(jsonSchema(EnrolRequest));
    expect(requestSchema('post', '/sync-api/api/hello')).toEqual(jsonSchema(HelloRequest));
    expect(requestSchema('post', '/sync-api/api/standby/lease')).toEqual(jsonSchema(StandbyLeaseRequest));
    expect(requestSchema('post', '/hq-api/api/venues/{venueId}/documents')).toEqual(jsonSchema(HqDocumentBody));
    expect(openapi.components.schemas.BatchHeader).toEqual(jsonSchema(BatchHeader));
    expect(openapi.components.schemas.TailResponse).toEqual(jsonSchema(TailResponse));
    for (const kind of Object.keys(ENVELOPE_KINDS) as (keyof typeof ENVELOPE_KINDS)[])
      expect(openapi.components.schemas).toHaveProperty(`Event_${kind.replace('.', '_')}`);
  });

  test('a documented body is what the route takes: a hello outside the documented boxTimeMs is refused by that field', async () => {
    const { maximum } = (jsonSchema(HelloRequest).properties as { boxTimeMs: { maximum: number } }).boxTimeMs;
    const res = await fetch(central.url('/sync-api/api/hello'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ protocol: 1, schema: 1, boxTimeMs: maximum * 10, pendingSeq: 0, version: 'x' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { codes: { args: string[] }[] }).codes[0]!.args).toEqual(['/boxTimeMs']);
  });

  test('every documented operation is mounted: none is answered as an unknown path or a wrong method', async () => {
    for (const { path, method } of operations()) {
      const url = path.replace(/\{[^}]+\}/g, SOME_UUID);
      const res = await fetch(central.url(url), {
        method: method.toUpperCase(),
        headers: { 'content-type': 'application/json' },
        ...(method === 'get' ? {} : { body: '{}' }),
      });
      const text = await res.text();
      expect({ method, path, status: res.status }).not.toMatchObject({ status: 405 });
      expect({ method, path, text }).not.toMatchObject({ text: expect.stringContaining('no route for') });
    }
  });

  test("the console's routes answer what their schemas say", async () => {
    const contracts = await contractsOf(central);
    const token = await central.hqToken();
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(central.url(path), {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: contracts.matching(method, path, res.status, await res.json()) as any };
    };
    expect((await call('GET', '/hq-app/bootstrap')).status).toBe(200);
    const code = await call('POST', '/hq-api/api/enrol-codes', { venueId: CENTRAL_DEMO.venues[1] });
    expect(code.status).toBe(201);
    const sim = new SimDevice(central.url(''));
    expect((await sim.enrol(code.body.code)).status).toBe(201);
    const documentId = randomUUID();
    sim.stockDocument(CENTRAL_DEMO.warehouses[1]!, [['flour', 'kg', 1_000_000]], documentId);
    expect((await sim.hello({ oldestPendingMs: sim.clockMs - 1000 })).status).toBe(200);
    expect((await call('GET', '/hq-api/api/devices')).body.length).toBeGreaterThan(0);
    expect((await sim.send(1, 1)).status).toBe(200);
    expect((await call('GET', `/hq-api/api/stock-documents/${documentId}`)).status).toBe(200);
    expect((await call('GET', '/hq-api/api/catalogue/status')).status).toBe(200);
    expect((await call('PATCH', '/hq-api/api/products/zurek/price', { price: '19.00' })).status).toBe(200);
    const rev = (await call('PUT', `/hq-api/api/warehouses/${CENTRAL_DEMO.warehouses[1]}`, { name: 'W' })).body.rev;
    const stale = { 'if-match': `"${rev - 1}"` };
    expect(
      (await call('PUT', `/hq-api/api/warehouses/${CENTRAL_DEMO.warehouses[1]}`, { name: 'V' }, stale)).status,
    ).toBe(412);
    expect((await call('POST', `/hq-api/api/devices/${sim.deviceId}/revoke`)).body.status).toBe('revoked');
  });

  test('a central without the console serves the API alone and says so once', async () => {
    expect(central.logs.filter((l) => l.includes('headquarters console: no web files found'))).toHaveLength(1);
    const res = await fetch(central.url('/'));
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ codes: [{ code: 'notFound' }] });
  });

  test("headquarters' reports, dashboard and order search answer as their response schemas say", async () => {
    const d = await enrolledDevice(central, CENTRAL_DEMO.venues[1]);
    d.order(undefined, 1, 'ORDERED');
    expect((await d.send(1, 1)).status).toBe(200);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const token = await central.hqToken();
    // The order was made now: the days around today in any zone hold it.
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const range = `from=${day(-30)}&to=${day(1)}`;
    for (const [path, query] of [
      ['/hq-api/api/reports/sales', range],
      ['/hq-api/api/reports/sales', `from=${day(-1)}&to=${day(1)}&by=hour`],
      ['/hq-api/api/reports/products', range],
      ['/hq-api/api/reports/channels', range],
      ['/hq-api/api/reports/kitchen', range],
      ['/hq-api/api/dashboard', ''],
      ['/hq-api/api/orders', 'status=ORDERED&limit=5'],
    ] as const) {
      const res = await fetch(central.url(`${path}?${query}`), { headers: { authorization: `Bearer ${token}` } });
      const body = (await res.json()) as { rows?: unknown[]; items?: unknown[] };
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      const schema = (openapi.paths[path]!.get!.responses['200'] as { content: Record<string, { schema: object }> })
        .content['application/json']!.schema;
      const validate = ajv.compile(schema);
      expect(validate(body) ? [] : validate.errors, `${path}?${query}`).toEqual([]);
      if (path.endsWith('/sales')) expect(body.rows?.length).toBeGreaterThan(0);
      if (path.endsWith('/orders')) expect(body.items?.length).toBeGreaterThan(0);
    }
  });

  test('every operation has a unique camelCase operationId; every error answer refers to ErrorBody', () => {
    expectOperationIds(openapi as unknown as OpenApi);
    expectErrorBodies(openapi as unknown as OpenApi, OWN_ERROR_SHAPES);
    expect((openapi.paths['/hq-api/api/reports/sales']!.get as { operationId?: string }).operationId).toBe(
      'getSalesReport',
    );
  });

  test('query parameters are typed, and the document is the check: a value out of it is a 400 naming it', async () => {
    expectDocumentedQueries(openapi as unknown as OpenApi);
    const token = await central.hqToken();
    const get = (path: string) => fetch(central.url(path), { headers: { authorization: `Bearer ${token}` } });
    const range = 'from=2026-11-01&to=2026-11-02';
    for (const ok of [
      `/hq-api/api/reports/sales?${range}&by=hour`,
      `/hq-api/api/reports/products?${range}&limit=200`,
      '/hq-api/api/orders?limit=200&status=READY&q=Ja',
    ])
      expect({ ok, status: (await get(ok)).status }).toEqual({ ok, status: 200 });
    for (const [bad, name] of [
      [`/hq-api/api/reports/sales?${range}&by=week`, 'by'],
      [`/hq-api/api/reports/products?${range}&limit=201`, 'limit'],
      ['/hq-api/api/reports/sales?from=2026-11-01', 'to'],
      ['/hq-api/api/reports/sales?from=1999-12-31&to=2026-11-02', 'from'],
      ['/hq-api/api/orders?limit=0', 'limit'],
      ['/hq-api/api/orders?status=LOST', 'status'],
      ['/hq-api/api/orders?q=J', 'q'],
      ['/hq-api/api/inbox?venueId=nope', 'venueId'],
    ] as const)
      await expectApiError(await get(bad), 400, 'invalidField', [name]);
  });

  test('the token endpoint names its client credentials: HTTP Basic, or the form (client_secret_post)', () => {
    const token = openapi.paths['/auth-oauth2/oauth/token']!.post as { security?: unknown };
    expect(token.security).toEqual([{ clientBasic: [] }, {}]);
  });

  test('/docs/api is a page of it', async () => {
    const res = await fetch(central.url('/docs/api'));
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('/sync-api/api/batches');
  });
});
