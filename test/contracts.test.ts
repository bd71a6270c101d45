import SwaggerParser from '@apidevtools/swagger-parser';
import specs from '@asyncapi/specs';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COMMAND_NAMES } from '../src/modules/ordering/commands/registry.js';
import { MAX_QTY } from '../src/shared/qty.js';
import { FRAMES } from '../src/shared/socket-protocol.js';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { contractsOf } from './support/contracts.js';
import { expectApiError } from './support/fixtures.js';
import { command, newOrder } from './support/orders.js';
import { openSocket } from './support/socket.js';
import { call, staff, W1, wpath } from './warehouse-client.js';
import {
  expectDocumentedQueries,
  expectErrorBodies,
  expectOperationIds,
  type OpenApi,
} from './support/openapi-rules.js';

// The box's contracts (docs/api.md "Contracts: /openapi.json and /asyncapi.json"): valid documents, every mounted
// route documented and every documented route mounted, pages that need nothing from elsewhere.
let box: TestBox;
let openapi: OpenApi;
let asyncapi: Record<string, unknown>;
beforeAll(async () => {
  box = await startTestBox();
  openapi = (await (await box.get('/openapi.json')).json()) as typeof openapi;
  asyncapi = (await (await box.get('/asyncapi.json')).json()) as typeof asyncapi;
});
afterAll(() => box?.stop());

const SOME_UUID = '00000000-0000-4000-8000-000000000000';
const operations = () =>
  Object.entries(openapi.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );

describe('/openapi.json', () => {
  test('is a valid OpenAPI 3.1 document', async () => {
    expect(openapi).toMatchObject({ openapi: '3.1.0', info: { title: 'venue-box' } });
    await expect(SwaggerParser.validate(structuredClone(openapi) as never)).resolves.toBeTruthy();
    // The validator does refuse a broken one: a parameter in no place OpenAPI knows.
    const broken = structuredClone(openapi) as typeof openapi;
    Object.assign(broken.paths['/healthz']!.get!, {
      parameters: [{ name: 'x', in: 'nowhere', schema: { type: 'string' } }],
    });
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
  });

  test('every operation has a summary and a 2xx answer with its content', () => {
    for (const { path, method, op } of operations()) {
      expect({ path, method, summary: op.summary }).toMatchObject({ summary: expect.stringMatching(/\S/) });
      expect(Object.keys(op.responses).some((s) => /^2\d\d$/.test(s))).toBe(true);
    }
  });

  test('documents the routes clients use, every order command among them', () => {
    const documented = new Set(operations().map((o) => `${o.method} ${o.path}`));
    for (const name of COMMAND_NAMES) {
      expect(documented).toContain(
        name === 'new' ? 'post /ordering-api/api/order/new' : `post /ordering-api/api/order/{id}/${name}`,
      );
    }
    for (const op of [
      'post /auth-oauth2/oauth/token',
      'get /venue-api/api/nearest',
      'get /menu-api/api/menu/{menu}',
      'put /menu-api/api/menu/{menu}/locks',
      'get /ordering-api/api/order/{id}',
      'get /ordering-api/api/orders',
      'post /warehouse-api/api/warehouse/{warehouse}/documents/{kind}',
      'get /printing-api/api/printers',
      'get /sync-api/api/status',
      'get /healthz',
      'get /readyz',
      'get /metrics',
      'get /openapi.json',
      'get /asyncapi.json',
    ]) {
      expect(documented).toContain(op);
    }
  });

  test('every documented operation is mounted: none is answered as an unknown path or a wrong method', async () => {
    for (const { path, method } of operations()) {
      const url = path.replace(/\{kind\}/, 'pz').replace(/\{[^}]+\}/g, SOME_UUID);
      const res = await fetch(box.url(url), {
        method: method.toUpperCase(),
        headers: { 'content-type': 'application/json' },
        ...(method === 'get' ? {} : { body: '{}' }),
      });
      const text = await res.text();
      expect({ method, path, status: res.status, text }).not.toMatchObject({ status: 405 });
      expect({ method, path, text }).not.toMatchObject({ text: expect.stringContaining('no route for') });
    }
  });

  test('every operation has a camelCase operationId, unique in the document, named for what it does', () => {
    expectOperationIds(openapi);
    const id = (method: string, path: string) => openapi.paths[path]![method]!.operationId;
    expect(id('post', '/ordering-api/api/order/{id}/append')).toBe('appendToOrder');
    expect(id('post', '/auth-oauth2/oauth/token')).toBe('issueToken');
    expect(id('get', '/venue-api/api/nearest')).toBe('listNearestVenues');
  });

  test('every error answer refers to the ErrorBody component; the token endpoint keeps its OAuthError', () => {
    expectErrorBodies(openapi, ['post /auth-oauth2/oauth/token', 'post /auth-oauth2/tenants/{tenant}/oauth/token']);
    const token = openapi.paths['/auth-oauth2/oauth/token']!.post!.responses;
    expect(token['401']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/OAuthError' } } },
    });
  });

  test('query parameters are typed: numbers, integers in range, enums; none is a bare string without a rule', () => {
    expectDocumentedQueries(openapi);
    const query = (path: string) =>
      Object.fromEntries(
        (openapi.paths[path]!.get!.parameters ?? []).filter((p) => p.in === 'query').map((p) => [p.name, p]),
      );
    expect(query('/venue-api/api/nearest')).toMatchObject({
      lat: { required: true, schema: { type: 'number', minimum: -90, maximum: 90 } },
      lng: { required: true, schema: { type: 'number', minimum: -180, maximum: 180 } },
    });
    expect(query('/ordering-api/api/orders')).toMatchObject({
      limit: { required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
      status: {
        style: 'form',
        explode: false,
        schema: { type: 'array', items: { enum: ['NEW', 'ORDERED', 'READY', 'COMPLETED', 'CANCELLED'] } },
      },
    });
    expect(query('/menu-api/api/menu/{menu}').channel).toMatchObject({
      schema: { type: 'string', enum: ['DELIVERY', 'TAKE_AWAY', 'DINE_IN'] },
    });
  });

  test('a query the document allows is taken, and one it refuses is a 400 naming the parameter', async () => {
    const kelner = (await box.token(DEMO.staff.username, DEMO.staff.password)).access_token;
    const get = (path: string) => box.get(path, kelner);
    for (const ok of [
      '/ordering-api/api/orders?limit=200&status=NEW,%20READY',
      '/ordering-api/api/orders?limit=1&since=2026-11-27T10:00:00.000Z',
      '/printing-api/api/jobs?limit=1000&state=failed',
      '/venue-api/api/nearest?lat=-90&lng=180',
    ])
      expect({ ok, status: (await get(ok)).status }).toEqual({ ok, status: 200 });
    for (const [bad, name] of [
      ['/ordering-api/api/orders?limit=201', 'limit'],
      ['/ordering-api/api/orders?limit=1.5', 'limit'],
      ['/ordering-api/api/orders?status=NEW,LOST', 'status'],
      ['/ordering-api/api/orders?venue=nope', 'venue'],
      ['/printing-api/api/jobs?limit=0', 'limit'],
      ['/printing-api/api/jobs?state=lost', 'state'],
      ['/venue-api/api/nearest?lat=50&lng=180.01', 'lng'],
      ['/venue-api/api/nearest?lng=20', 'lat'],
      [`/menu-api/api/menu/${DEMO.menu}?channel=PICNIC&instance=${DEMO.openVenue}`, 'channel'],
    ] as const) {
      const body = await expectApiError(await get(bad), 400, 'invalidField', [name]);
      expect(body.codes[0]!.message).toContain(name);
    }
  });

  test('the token endpoint needs the client (Basic, or the form), /metrics a staff token or an allowed address', () => {
    const op = (method: string, path: string) => openapi.paths[path]![method] as { security?: unknown[] };
    expect(op('post', '/auth-oauth2/oauth/token').security).toEqual([{ clientBasic: [] }, {}]);
    expect(op('get', '/metrics').security).toEqual([{ bearer: ['write'] }, {}]);
    expect(op('get', '/healthz').security).toEqual([]);
    expect(op('get', '/ordering-api/api/orders').security).toEqual([{ bearer: ['write'] }]);
    expect(openapi.components.securitySchemes).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer' },
      clientBasic: { type: 'http', scheme: 'basic' },
    });
  });

  test("/media/{name}'s 304 is documented, with the If-None-Match that asks for it", () => {
    const op = openapi.paths['/media/{name}']!.get!;
    expect(op.responses).toHaveProperty('304');
    expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'If-None-Match', in: 'header' }));
  });

  test('a path the document does not list is not mounted', async () => {
    await expectApiError(await box.get('/ordering-api/api/order'), 404, 'notFound');
  });
});

describe('/asyncapi.json', () => {
  test('is a valid AsyncAPI 3.0 document', () => {
    // The AsyncAPI schema carries its own copy of the draft-07 meta-schema: ajv's is left out (meta: false).
    const ajv = new Ajv({ strict: false, allErrors: true, meta: false, validateSchema: false });
    addFormats(ajv);
    const validate = ajv.compile(specs.schemas['3.0.0'] as object);
    const ok = validate(asyncapi);
    expect(ok ? [] : validate.errors).toEqual([]);
    // The validator does refuse a broken one: an operation must send or receive.
    const broken = structuredClone(asyncapi) as { operations: Record<string, { action: string }> };
    broken.operations.receiveFrames!.action = 'push';
    expect(validate(broken)).toBe(false);
  });

  test('names the server the request came to (its Host), and the default for a Host that is not host[:port]', async () => {
    const servers = async (host: string) => {
      // fetch() does not let a caller set Host: node:http does.
      const { request } = await import('node:http');
      return new Promise<unknown>((resolve, reject) => {
        request(box.url('/asyncapi.json'), { headers: { host } }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c)).on('end', () => resolve(JSON.parse(text).servers.box.host));
        })
          .on('error', reject)
          .end();
      });
    };
    expect((asyncapi.servers as { box: { host: string } }).box.host).toBe(`127.0.0.1:${box.port}`);
    expect(await servers('venue-7.lan:8080')).toBe('venue-7.lan:8080');
    expect(await servers('[fd00::7]:8080')).toBe('[fd00::7]:8080');
    for (const bad of ['evil.example/x', 'a b', 'host:99999', 'x"y', `${'a'.repeat(64)}.lan`])
      expect({ bad, host: await servers(bad) }).toEqual({ bad, host: 'localhost:8080' });
  });

  test('lists every frame type of the protocol', () => {
    const messages = (asyncapi.components as { messages: Record<string, unknown> }).messages;
    expect(Object.keys(messages).sort()).toEqual(Object.keys(FRAMES).sort());
  });

  test('frames of a real socket match it: HELLO, ORDER_CHANGE, NOTIFICATION', async () => {
    const contracts = await contractsOf(box);
    const token = (await box.token()).access_token;
    const ws = await openSocket(box.wsUrl('/ordering-api/ws'), token);
    contracts.frame(await ws.next('HELLO'));
    await command(box, token, 'new', newOrder(DEMO.openVenue));
    contracts.frame(await ws.next('ORDER_CHANGE'));
    await command(box, token, 'new', newOrder(DEMO.openVenue, [{ productId: 'kawior', quantity: 1 }]));
    contracts.frame(await ws.next('NOTIFICATION'));
    ws.close();
  });

  test('a frame that differs from its message fails the check (the check can fail)', async () => {
    const contracts = await contractsOf(box);
    expect(() => contracts.frame({ type: 'HELLO', seq: 0, payload: { userId: 'u' } } as never)).toThrow(/expiresAt/);
  });
});

describe('the pages', () => {
  test('/docs/api and /docs/socket are HTML made by the box, with nothing fetched from elsewhere', async () => {
    for (const [path, must] of [
      [
        '/docs/api',
        ['/ordering-api/api/order/{id}/submit', 'Idempotency-Key', '(clientBasic, or none)', '(bearer (write))'],
      ],
      ['/docs/socket', Object.keys(FRAMES)],
    ] as const) {
      const res = await box.get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await res.text();
      for (const text of must) expect(html).toContain(text);
      expect(html).not.toMatch(/<script|<link|src=["']?https?:/i);
    }
  });
});

describe('what the documents say is what the box accepts', () => {
  const documentsOp = 'post /warehouse-api/api/warehouse/{warehouse}/documents/{kind}';
  const requestSchema = (op: string) => {
    const [method, path] = op.split(' ') as [string, string];
    const body = (
      openapi.paths[path]![method] as unknown as { requestBody: { content: Record<string, { schema: object }> } }
    ).requestBody;
    return body.content['application/json']!.schema;
  };

  test('query values: documented-valid exactly when the box takes them (lat, lng, limit around their bounds)', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const parameter = (path: string, name: string) =>
      ajv.compile(
        (openapi.paths[path]!.get!.parameters ?? []).find((p) => p.in === 'query' && p.name === name)!.schema,
      );
    const lat = parameter('/venue-api/api/nearest', 'lat');
    const lng = parameter('/venue-api/api/nearest', 'lng');
    const limit = parameter('/ordering-api/api/orders', 'limit');
    const kelner = (await box.token(DEMO.staff.username, DEMO.staff.password)).access_token;
    const around = (bound: number) =>
      fc.oneof(
        fc.constantFrom(bound, -bound, bound + 1e-9, -bound - 1e-9, 0, -0),
        fc.double({ min: -2 * bound, max: 2 * bound, noNaN: true }),
      );
    await fc.assert(
      fc.asyncProperty(around(90), around(180), async (y, x) => {
        const status = (await box.get(`/venue-api/api/nearest?lat=${y}&lng=${x}`, kelner)).status;
        expect({ y, x, status }).toEqual({ y, x, status: lat(y) && lng(x) ? 200 : 400 });
      }),
      { numRuns: 30 },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.integer({ min: -3, max: 203 }), fc.double({ min: 0, max: 201 })), async (n) => {
        const status = (await box.get(`/ordering-api/api/orders?limit=${n}`, kelner)).status;
        expect({ n, status }).toEqual({ n, status: limit(n) ? 200 : 400 });
      }),
      { numRuns: 30 },
    );
  });

  test("a stock document's quantities: documented-valid exactly when the box takes them (an Inventory counts 0)", async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const documented = ajv.compile(requestSchema(documentsOp));
    const kelner = await staff(box);
    const post = async (kind: string, qty: number) =>
      (await call(box, kelner, 'POST', wpath(W1, `/documents/${kind}`), { items: [{ id: 'maka', unit: 'kg', qty }] }))
        .status;
    // Six decimals at most (a micro-unit): more is a rule of the number, not of its range.
    const qty = fc.oneof(
      fc.constantFrom(0, -0, 0.000001, -0.000001, MAX_QTY, MAX_QTY + 1),
      fc.integer({ min: -1_000_000, max: 2_000_000_000 }).map((micro) => micro / 1_000_000),
    );
    await fc.assert(
      fc.asyncProperty(qty, async (q) => {
        const body = { items: [{ id: 'maka', unit: 'kg', qty: q }] };
        const valid = documented(body);
        expect({ q, status: await post('inventory', q) }).toEqual({ q, status: valid ? 201 : 400 });
        // Every other kind refuses 0 too, as the operation's description says.
        if (q === 0) expect(await post('pz', q)).toBe(400);
      }),
      { numRuns: 40 },
    );
  });
});
