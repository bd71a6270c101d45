import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, requestToken, startTestBox, type TestBox } from './support/box.js';
import { openSocket } from './support/socket.js';

// docs/api.md "The socket": a browser opens the socket with a single-use ticket, never with its token in the URL.
let box: TestBox;
beforeAll(async () => {
  box = await startTestBox({ config: { auth: { refreshRetryGraceSeconds: 0 } } });
});
afterAll(async () => {
  await box.stop();
});

const ticketOf = async (b: TestBox, token: string): Promise<{ ticket: string; expiresIn: number }> => {
  const res = await b.post('/ordering-api/api/socket-ticket', token, undefined);
  expect(res.status).toBe(200);
  return (await res.json()) as { ticket: string; expiresIn: number };
};
const refusal = (url: string) =>
  openSocket(url).then(
    () => {
      throw new Error('upgrade was accepted');
    },
    (err: { status?: number }) => err.status,
  );

describe('socket tickets', () => {
  test('a ticket opens one socket as its token would; used or unknown it is refused with 401', async () => {
    const t = await box.token();
    const { ticket, expiresIn } = await ticketOf(box, t.access_token);
    expect(expiresIn).toBe(30);
    const ws = await openSocket(box.wsUrl(`/ordering-api/ws?ticket=${ticket}`));
    expect((await ws.next('HELLO')).payload.userId).toBe(t.UUID);
    ws.close();
    expect(await refusal(box.wsUrl(`/ordering-api/ws?ticket=${ticket}`))).toBe(401);
    expect(await refusal(box.wsUrl('/ordering-api/ws?ticket=no-such-ticket'))).toBe(401);
    // Asking for one needs the token in Authorization.
    const res = await box.post('/ordering-api/api/socket-ticket', undefined, undefined);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ codes: [{ code: 'unauthorized' }] });
  });

  test("a staff ticket carries the token's scope: the venue socket", async () => {
    const staff = (await box.token(DEMO.staff.username, DEMO.staff.password)).access_token;
    const { ticket } = await ticketOf(box, staff);
    const ws = await openSocket(box.wsUrl(`/ordering-api/ws?venue=${DEMO.openVenue}&ticket=${ticket}`));
    expect((await ws.next('HELLO')).payload.venue).toBe(DEMO.openVenue);
    ws.close();
    const guest = (await box.token()).access_token;
    const guestTicket = (await ticketOf(box, guest)).ticket;
    expect(await refusal(box.wsUrl(`/ordering-api/ws?venue=${DEMO.openVenue}&ticket=${guestTicket}`))).toBe(403);
  });

  test('a ticket of a token revoked since is refused, as the token is', async () => {
    const t = await box.token();
    const { ticket } = await ticketOf(box, t.access_token);
    const refreshed = await requestToken(box, { grant_type: 'refresh_token', refresh_token: t.refresh_token });
    expect(refreshed.status).toBe(200);
    // The spent refresh token again: reuse, which revokes the family's access tokens.
    const reused = await requestToken(box, { grant_type: 'refresh_token', refresh_token: t.refresh_token });
    expect(reused.status).toBe(400);
    expect(await refusal(box.wsUrl(`/ordering-api/ws?ticket=${ticket}`))).toBe(401);
  });

  test('at most 8 unused tickets per user: the 9th is 429 with Retry-After', async () => {
    const t = (await box.token()).access_token;
    for (let i = 0; i < 8; i++) await ticketOf(box, t);
    const res = await box.post('/ordering-api/api/socket-ticket', t, undefined);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await res.json()).toMatchObject({ codes: [{ code: 'tooManyRequests' }] });
  });

  test("the ticket's socket closes with 4001 at the token's exp", async () => {
    const shortBox = await startTestBox({ config: { auth: { accessTokenTtlSeconds: 2 } } });
    try {
      const t = await shortBox.token();
      const { ticket, expiresIn } = await ticketOf(shortBox, t.access_token);
      expect(expiresIn).toBeLessThanOrEqual(2);
      const ws = await openSocket(shortBox.wsUrl(`/ordering-api/ws?ticket=${ticket}`));
      const hello = await ws.next('HELLO');
      const exp = JSON.parse(Buffer.from(t.access_token.split('.')[1]!, 'base64url').toString()) as { exp: number };
      expect(Date.parse(hello.payload.expiresAt as string)).toBe(exp.exp * 1000);
      expect(await ws.closed).toEqual({ code: 4001, reason: 'token expired' });
    } finally {
      await shortBox.stop();
    }
  });
});
