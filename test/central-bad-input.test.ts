import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CENTRAL_DEMO, startTestCentral, type TestCentral } from './support/central.js';
import { enrolledDevice } from './support/sim-device.js';

// Text the central's PostgreSQL cannot store (a NUL, a lone UTF-16 surrogate), in every route's path parameters,
// query and JSON body: a 400 `invalidField` naming where it is, never a 500 (src/http/nul.ts; docs/sync.md "API").
// The cases are made from the routes the central mounts, as its /openapi.json lists them.

let central: TestCentral;
let token: string;
let operations: Operation[];
beforeAll(async () => {
  central = await startTestCentral();
  token = await central.hqToken();
  const spec = (await (await fetch(central.url('/openapi.json'))).json()) as {
    paths: Record<string, Record<string, OpenApiOperation>>;
  };
  operations = Object.entries(spec.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
});
afterAll(async () => {
  expect(await central.stop()).toBe(0);
});

interface OpenApiOperation {
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, unknown> };
}
interface Operation {
  method: string;
  path: string;
  op: OpenApiOperation;
}

/** The path with each `{param}` filled: `bad` (raw, already percent-encoded) for `name`, a harmless value for the others. */
const pathOf = (path: string, name?: string, bad?: string) =>
  path.replace(/\{(\w+)\}/g, (_, param: string) => (param === name ? bad! : 'x1'));

async function ask(method: string, url: string, body?: string) {
  const res = await fetch(central.url(url), {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'if-match': '"1"' },
    body: body ?? (['POST', 'PUT', 'PATCH'].includes(method) ? '{}' : undefined),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: JSON.parse(text) as { message: string; codes: { code: string; args: string[] }[] },
  };
}

/** Every answer that is not 400 invalidField with `args`, as `METHOD url: status message`. */
function misses(
  answers: { what: string; status: number; body: { message: string; codes: { code: string; args: string[] }[] } }[],
  args: (what: string) => string[],
  message: RegExp,
): string[] {
  return answers
    .filter(
      (a) =>
        a.status !== 400 ||
        a.body.codes?.[0]?.code !== 'invalidField' ||
        JSON.stringify(a.body.codes[0].args) !== JSON.stringify(args(a.what)) ||
        !message.test(a.body.message),
    )
    .map((a) => `${a.what}: ${a.status} ${a.body.message}`);
}

describe('a NUL in a path or query parameter', () => {
  test('every route with one: 400 invalidField naming the parameter', async () => {
    const answers = [];
    for (const { method, path, op } of operations) {
      for (const p of op.parameters ?? []) {
        if (p.in !== 'path' && p.in !== 'query') continue;
        const url = p.in === 'path' ? pathOf(path, p.name, 'a%00b') : `${pathOf(path)}?${p.name}=a%00b`;
        answers.push({ what: `${method} ${url} ${p.name}`, ...(await ask(method, url)) });
      }
    }
    // The HQ API alone has dozens; a route list that came out empty would pass anything.
    expect(answers.filter((a) => a.what.includes('/hq-api/')).length).toBeGreaterThan(30);
    expect(misses(answers, (what) => [what.split(' ').pop()!], /NUL/)).toEqual([]);
  });
});

describe('a lone surrogate in a JSON body', () => {
  test('every route with a JSON body, before its own checks: 400 invalidField naming the pointer', async () => {
    const answers = [];
    for (const { method, path, op } of operations) {
      if (!op.requestBody?.content['application/json']) continue;
      for (const [pointer, body] of [
        ['/x', '{"x":"\\ud800"}'],
        ['/a/0', '{"a":["\\udfff"]}'],
        ['/\udc00', '{"\\udc00":1}'],
      ] as const) {
        answers.push({ what: `${method} ${path} ${pointer}`, ...(await ask(method, pathOf(path), body)) });
      }
    }
    expect(answers.length).toBeGreaterThan(30);
    // A box's signed hello and lease read their bytes raw (the signature covers them) and check them themselves.
    const signed = (what: string) => /^POST \/sync-api\/api\/(hello|standby\/lease) /.test(what);
    expect(answers.filter((a) => signed(a.what)).map((a) => [a.what, a.status])).toEqual(
      answers.filter((a) => signed(a.what)).map((a) => [a.what, 400]),
    );
    const rest = answers.filter((a) => !signed(a.what));
    expect(misses(rest, (what) => [what.slice(what.lastIndexOf(' ') + 1)], /lone UTF-16 surrogate/)).toEqual([]);
  });

  test('a call-centre order valid but for one surrogate: 400, not the database failing as a 500', async () => {
    const order = (name: string) =>
      JSON.stringify({
        id: randomUUID(),
        orderType: 'TAKE_AWAY',
        contact: { name },
        buckets: [{ venue: CENTRAL_DEMO.venues[0], lines: [{ productId: 'zurek', quantity: 1 }] }],
      }).replace('"NAME"', '"\\ud800"');
    const refused = await ask('POST', '/hq-api/api/orders', order('NAME'));
    expect(refused).toMatchObject({
      status: 400,
      body: { codes: [{ code: 'invalidField', args: ['/contact/name'] }] },
    });
    // A pair is a character like any other.
    expect((await ask('POST', '/hq-api/api/orders', order('Zo\ud83d\ude00'))).status).toBe(202);
  });

  test('in a batch: a dead letter; in a signed hello: U+FFFD kept, a NUL a 400 (never a 500)', async () => {
    const d = await enrolledDevice(central);
    d.order();
    const event = JSON.parse(d.order().envelope).body;
    d.events.pop();
    // JSON.stringify writes a lone surrogate as the escape "\ud800", which jsonb refuses.
    d.append('order.changed', event.order.id, { ...event, order: { ...event.order, note: 'a\ud800' } });
    d.order();
    const res = await d.send(1, 3);
    expect(res.status).toBe(200);
    expect(res.body.deadLetters.map((x: { seq: number }) => x.seq)).toEqual([2]);
    const hello = await d.hello({ version: 'a\ud800' });
    expect([hello.status, hello.body]).toEqual([200, expect.anything()]);
    const nul = await d.hello({ version: 'a\u0000b', name: 'b\u0000' } as object);
    expect(nul).toMatchObject({ status: 400, body: { codes: [{ code: 'invalidBody' }] } });
  });
});
