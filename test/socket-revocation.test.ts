import { afterAll, beforeAll, expect, test } from 'vitest';
import { basic, DEMO, requestToken, startTestBox, type TestBox, type TokenBody } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { expectApiError } from './support/fixtures.js';
import { expectClosedWith, expectOrderReaches } from './support/revocation.js';
import { openSocket, type TestSocket } from './support/socket.js';
import { enrol, FAST_SYNC, syncStatus, waitFor } from './support/sync.js';

// docs/api.md "Token revocation": headquarters retiring a staff user or revoking an OAuth client closes their
// open sockets at once (4001), as a reused refresh token does its family's (test/auth-revocation.test.ts). One
// real central (embedded PostgreSQL) and one real box of the demo tenant enrolled at it; the tests share them.
const CONFIG = { sync: { ...FAST_SYNC.sync, catalogueWaitSeconds: 20 } };
const VENUE = DEMO.openVenue;
// The catalogue reaches the box by its long poll, answered as soon as headquarters changes it (docs/sync.md "Down:
// the catalogue"); the socket closes as the box applies it. Measured from headquarters' answer.
const CLOSED_WITHIN_MS = 1000;
let central: TestCentral;
let box: TestBox;
let hqToken: string;

beforeAll(async () => {
  central = await startTestCentral();
  box = await startTestBox({ config: CONFIG });
  await enrol(box, central.url(''), await central.enrolCode(VENUE));
  hqToken = await central.hqToken();
  await caughtUp(await centralRev());
}, 120_000);
afterAll(async () => {
  await box?.stop();
  await central?.stop();
});

async function hq(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(central.url(`/hq-api/api${path}`), {
    method,
    headers: {
      authorization: `Bearer ${hqToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: JSON.parse(await res.text()) };
}
const centralRev = async (): Promise<number> => (await hq('GET', '/catalogue')).body.rev;
const caughtUp = (rev: number) =>
  waitFor(`box at catalogue rev ${rev}`, async () => ((await syncStatus(box)).catalogue?.rev ?? 0) >= rev, 30_000);

async function venueSocket(token: string): Promise<TestSocket> {
  const ws = await openSocket(box.wsUrl(`/ordering-api/ws?venue=${VENUE}`), token);
  await ws.next('HELLO');
  return ws;
}

async function staffToken(username: string, password: string, client = basic()): Promise<TokenBody> {
  const res = await requestToken(box, { grant_type: 'password', username, password }, { authorization: client });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as TokenBody;
}

test("a retired staff user's venue socket closes at once with 4001 user retired; another user's stays", async () => {
  const retiring = await staffToken('kuchnia', 'kuchnia-demo-1');
  const doomed = await venueSocket(retiring.access_token);
  const bystander = await venueSocket((await staffToken('kelner', 'kelner-demo-1')).access_token);
  await expectOrderReaches(box, VENUE, [doomed, bystander]);

  const res = await hq('DELETE', '/staff-users/kuchnia');
  expect(res.status).toBe(200);

  await expectClosedWith(doomed, 'user retired', CLOSED_WITHIN_MS);
  await expectApiError(await box.get('/ordering-api/api/orders', retiring.access_token), 401, 'unauthorized');
  await expectOrderReaches(box, VENUE, [bystander], [doomed]);
  bystander.close();
});

test("a revoked client's sockets close at once with 4001 client revoked, and its tokens get 401; others stay", async () => {
  const secret = 'kiosk-two-secret';
  const added = await hq('PUT', '/clients/kiosk-two', { clientSecret: secret });
  expect(added.status).toBe(200);
  await caughtUp(added.body.rev);
  const viaKiosk = await staffToken('kelner', 'kelner-demo-1', basic('kiosk-two', secret));
  const doomed = await venueSocket(viaKiosk.access_token);
  // The same user through the demo client: another client's token, untouched.
  const bystander = await venueSocket((await staffToken('kelner', 'kelner-demo-1')).access_token);
  await expectOrderReaches(box, VENUE, [doomed, bystander]);

  const res = await hq('DELETE', '/clients/kiosk-two');
  expect(res.status).toBe(200);

  await expectClosedWith(doomed, 'client revoked', CLOSED_WITHIN_MS);
  await expectApiError(await box.get('/ordering-api/api/orders', viaKiosk.access_token), 401, 'unauthorized');
  const refused = await openSocket(box.wsUrl(`/ordering-api/ws?venue=${VENUE}`), viaKiosk.access_token).then(
    (ws) => {
      ws.close();
      return 101;
    },
    (err: { status?: number }) => err.status,
  );
  expect(refused).toBe(401);
  await expectOrderReaches(box, VENUE, [bystander], [doomed]);
  bystander.close();
});
