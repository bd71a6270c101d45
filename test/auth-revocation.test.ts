import { afterAll, beforeAll, expect, test } from 'vitest';
import { DEMO, requestToken, startTestBox, type TestBox, type TokenBody } from './support/box.js';
import { expectApiError, expectOAuthError } from './support/fixtures.js';
import { expectClosedWith, expectOrderReaches } from './support/revocation.js';
import { openSocket } from './support/socket.js';

// No retry grace: these tests replay a spent refresh token at once, which within the grace is a retry
// (test/interop-oauth.test.ts). A successor already used is reuse whatever the grace.
const CONFIG = { auth: { refreshRetryGraceSeconds: 0 } };
let box: TestBox;
beforeAll(async () => {
  box = await startTestBox({ config: CONFIG });
});
afterAll(async () => {
  await box?.stop();
});

const NEAREST = '/venue-api/api/nearest?lat=50.06&lng=19.94';
const WS = '/ordering-api/ws';
const refresh = (refresh_token: string) => ({ grant_type: 'refresh_token', refresh_token });

async function renew(t: TokenBody): Promise<TokenBody> {
  const res = await requestToken(box, refresh(t.refresh_token));
  expect(res.status).toBe(200);
  return (await res.json()) as TokenBody;
}

/** The access token works on an API call and opens a socket. */
async function expectAccepted(t: TokenBody): Promise<void> {
  expect((await box.get(NEAREST, t.access_token)).status).toBe(200);
  const ws = await openSocket(box.wsUrl(WS), t.access_token);
  expect((await ws.next('HELLO')).payload.userId).toBe(t.UUID);
  ws.close();
}

/** The access token gets 401 on an API call and on the socket upgrade (header and query parameter alike). */
async function expectRevoked(t: TokenBody): Promise<void> {
  const res = await box.get(NEAREST, t.access_token);
  expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  await expectApiError(res, 401, 'unauthorized');
  for (const attempt of [
    () => openSocket(box.wsUrl(WS), t.access_token),
    () => openSocket(box.wsUrl(`${WS}?access_token=${t.access_token}`)),
  ]) {
    const status = await attempt().then(
      (ws) => {
        ws.close();
        return 101;
      },
      (err: { status?: number }) => err.status,
    );
    expect(status).toBe(401);
  }
}

test('a replayed refresh token revokes the access tokens of its whole family on the API and the socket', async () => {
  const first = await box.token();
  const second = await renew(first);
  const bystander = await box.token(DEMO.staff.username, DEMO.staff.password);
  await expectAccepted(first);
  await expectAccepted(second);

  await expectOAuthError(await requestToken(box, refresh(first.refresh_token)), 400, 'invalid_grant');

  await expectRevoked(first);
  await expectRevoked(second);
  await expectOAuthError(await requestToken(box, refresh(second.refresh_token)), 400, 'invalid_grant');
  // Another user's tokens, and a new sign-in of the same kind, are untouched.
  await expectAccepted(bystander);
  await expectAccepted(await box.token());
});

test('a replayed refresh token whose successor was already used is reuse too', async () => {
  const first = await box.token(DEMO.staff.username, DEMO.staff.password);
  const second = await renew(first);
  const third = await renew(second);
  await expectAccepted(third);

  await expectOAuthError(await requestToken(box, refresh(first.refresh_token)), 400, 'invalid_grant');

  for (const t of [first, second, third]) await expectRevoked(t);
  await expectOAuthError(await requestToken(box, refresh(third.refresh_token)), 400, 'invalid_grant');
});

test('revocations survive a restart of the box; other tokens keep working across it', async () => {
  const first = await box.token();
  const second = await renew(first);
  const bystander = await box.token();
  await expectOAuthError(await requestToken(box, refresh(first.refresh_token)), 400, 'invalid_grant');
  await expectRevoked(second);

  await box.stop();
  box = await startTestBox({ dataDir: box.dataDir, config: CONFIG });

  await expectRevoked(first);
  await expectRevoked(second);
  await expectAccepted(bystander);
  await expectOAuthError(await requestToken(box, refresh(second.refresh_token)), 400, 'invalid_grant');
  await expectAccepted(await renew(bystander));
});

test('a replayed refresh token closes the open sockets of its family at once (4001 token revoked); others stay', async () => {
  const first = await box.token(DEMO.staff.username, DEMO.staff.password);
  const second = await renew(first);
  const otherFamily = await box.token(DEMO.staff.username, DEMO.staff.password);
  const venueWs = `${WS}?venue=${DEMO.openVenue}`;
  // The family's sockets: one with each of its access tokens, the second through a ticket (as browsers open it).
  const withFirst = await openSocket(box.wsUrl(venueWs), first.access_token);
  const ticket = await box.post('/ordering-api/api/socket-ticket', second.access_token, undefined);
  expect(ticket.status).toBe(200);
  const withTicket = await openSocket(
    box.wsUrl(`${venueWs}&ticket=${((await ticket.json()) as { ticket: string }).ticket}`),
  );
  const bystander = await openSocket(box.wsUrl(venueWs), otherFamily.access_token);
  const sockets = [withFirst, withTicket, bystander];
  for (const ws of sockets) await ws.next('HELLO');
  await expectOrderReaches(box, DEMO.openVenue, sockets);

  await expectOAuthError(await requestToken(box, refresh(first.refresh_token)), 400, 'invalid_grant');

  await expectClosedWith(withFirst, 'token revoked');
  await expectClosedWith(withTicket, 'token revoked');
  // Every order of the venue still reaches the other family's socket, none the closed ones.
  await expectOrderReaches(box, DEMO.openVenue, [bystander], [withFirst, withTicket]);
  bystander.close();
});
