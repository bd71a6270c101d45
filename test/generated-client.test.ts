import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClient } from '@hey-api/openapi-ts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';

// A client generated from the box's /openapi.json by a common generator, as an integrator would make one
// (docs/api.md "Contracts: /openapi.json and /asyncapi.json"): it must compile against the document's operation
// names and types, and do the walk-through on a real box with nothing added by hand: the token with the client's
// HTTP Basic credentials (the token endpoint's security), venues by lat/lng as numbers, a menu, an order, and
// the staff list filtered by a list of statuses.
const run = promisify(execFile);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

let box: TestBox;
let dir: string;
beforeAll(async () => {
  box = await startTestBox();
  dir = mkdtempSync(join(tmpdir(), 'vb-generated-client-'));
});
afterAll(async () => {
  await box?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The integrator's program: only the generated SDK's functions and types, run with the box's URL. */
const PROGRAM = `
import { createClient } from './client/client/index.js';
import { createOrder, getMenu, getOrder, issueToken, listNearestVenues, listOrders } from './client/index.js';

const [baseUrl, tenant, clientId, clientSecret, staffName, staffPassword] = process.argv.slice(2) as [
  string, string, string, string, string, string,
];
const api = createClient({ baseUrl });
const client = \`\${clientId}:\${clientSecret}\`;

// The token endpoint's security is HTTP Basic: the generated call sends it from \`auth\`.
const anonymous = await issueToken({
  client: api,
  auth: client,
  headers: { 'x-tenant': tenant },
  body: { grant_type: 'password', username: 'anonymous', password: '' },
  throwOnError: true,
});
const token: string = anonymous.data.access_token;

// lat and lng are numbers in the document: a string would not compile.
const venues = await listNearestVenues({ client: api, auth: token, query: { lat: 50.0614, lng: 19.9366 }, throwOnError: true });
const venue = venues.data.find((v) => v.id === process.env.VB_OPEN_VENUE) ?? venues.data[0]!;

const menu = await getMenu({
  client: api,
  auth: token,
  path: { menu: venue.menu },
  query: { channel: 'TAKE_AWAY', instance: venue.id },
  throwOnError: true,
});
type Node = { kind: string; id: string; items?: Node[] };
const products = (node: Node): string[] =>
  node.kind === 'svc/product' ? [node.id] : (node.items ?? []).flatMap((n) => products(n as Node));
const soldOut = new Set(menu.data.locks.map((l) => l.productId));
const productId = products(menu.data.root as Node).find((p) => !soldOut.has(p))!;

const placed = await createOrder({
  client: api,
  auth: token,
  body: { orderType: 'TAKE_AWAY', buckets: [{ venue: venue.id, lines: [{ productId, quantity: 2 }] }] },
  throwOnError: true,
});
const orderId: string = placed.data.orderId;

// The command is applied after its confirmation: the order is there within moments.
let status = '';
for (let i = 0; i < 50 && !status; i++) {
  const read = await getOrder({ client: api, auth: token, path: { id: orderId } });
  if (read.data) status = read.data.status;
  else await new Promise((r) => setTimeout(r, 100));
}

const staff = await issueToken({
  client: api,
  auth: client,
  headers: { 'x-tenant': tenant },
  body: { grant_type: 'password', username: staffName, password: staffPassword },
  throwOnError: true,
});
// status is a list of the statuses' enum, limit an integer: sent as status=NEW,ORDERED&limit=50.
const list = await listOrders({
  client: api,
  auth: staff.data.access_token,
  query: { venue: venue.id, status: ['NEW', 'ORDERED'], limit: 50 },
  throwOnError: true,
});

console.log(JSON.stringify({ venues: venues.data.length, productId, orderId, status, listed: list.data.items.map((o) => o.id) }));
`;

test('a client generated from /openapi.json compiles and orders on the box: token, venues, menu, order, list', async () => {
  const res = await box.get('/openapi.json');
  writeFileSync(join(dir, 'openapi.json'), await res.text());
  await createClient({
    input: join(dir, 'openapi.json'),
    output: { path: join(dir, 'client'), importFileExtension: '.js' },
    logs: { level: 'silent' },
  });
  writeFileSync(join(dir, 'program.ts'), PROGRAM);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023', 'DOM', 'DOM.Iterable'],
        // Node's types from this repository (the program reads process.argv).
        typeRoots: [join(process.cwd(), 'node_modules', '@types')],
        types: ['node'],
        strict: true,
        skipLibCheck: true,
        outDir: 'out',
      },
      files: ['program.ts'],
    }),
  );
  // The program's types are the document's: a wrong name or type fails here, with tsc's errors as the message.
  await run(process.execPath, [tsc, '-p', dir], { cwd: dir }).catch((err: { stdout: string }) => {
    expect.fail(`the program does not compile against the generated client:\n${err.stdout}`);
  });
  const { stdout } = await run(
    process.execPath,
    [
      join(dir, 'out', 'program.js'),
      box.url(''),
      DEMO.tenant,
      DEMO.client.clientId,
      DEMO.client.clientSecret,
      DEMO.staff.username,
      DEMO.staff.password,
    ],
    { env: { ...process.env, VB_OPEN_VENUE: DEMO.openVenue }, timeout: 15_000 },
  );
  const result = JSON.parse(stdout) as { venues: number; orderId: string; status: string; listed: string[] };
  expect(result).toMatchObject({ venues: DEMO.venues.length, status: expect.stringMatching(/^(NEW|ORDERED)$/) });
  expect(result.listed).toContain(result.orderId);
}, 60_000);
