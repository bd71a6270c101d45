import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { basic, DEMO, requestToken, startTestBox, type TestBox, type TokenBody } from './support/box.js';
import {
  basicOf,
  decodeJwt,
  expectApiError,
  expectOAuthError,
  TENANT_B,
  UUID_RE,
  writeTenantB,
} from './support/fixtures.js';

// `box` serves the demo tenant and tenant B; `other` is a second box with its own signing key;
// `short` issues access tokens that live one second.
let box: TestBox;
let other: TestBox;
let short: TestBox;

beforeAll(async () => {
  [box, other, short] = await Promise.all([
    // No retry grace: these tests present spent refresh tokens at once (the grace: test/interop-oauth.test.ts).
    startTestBox({ config: { provisioningFile: writeTenantB(), auth: { refreshRetryGraceSeconds: 0 } } }),
    startTestBox(),
    startTestBox({ config: { auth: { accessTokenTtlSeconds: 1 } } }),
  ]);
});
afterAll(async () => {
  await Promise.all([box?.stop(), other?.stop(), short?.stop()]);
});

const NEAREST = '/venue-api/api/nearest?lat=50.06&lng=19.94';
const password = (username: string, pass: string, extra: Record<string, string> = {}) => ({
  grant_type: 'password',
  username,
  password: pass,
  ...extra,
});
const anonymous = (extra: Record<string, string> = {}) => password('anonymous', '', extra);
const refresh = (refresh_token: string) => ({ grant_type: 'refresh_token', refresh_token });
const tenantB = { 'x-tenant': TENANT_B.id, authorization: basicOf(TENANT_B.client) };

async function okToken(res: Response): Promise<TokenBody> {
  const text = await res.text();
  expect({ status: res.status, body: text }).toMatchObject({ status: 200 });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  // RFC 6749 5.1: token responses must not be cached.
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('pragma')).toBe('no-cache');
  return JSON.parse(text) as TokenBody;
}

describe('password grant', () => {
  test('anonymous: every field of the Token response, and an EdDSA JWT carrying the same claims', async () => {
    const before = Math.floor(Date.now() / 1000);
    const token = await okToken(await requestToken(box, anonymous({ scope: 'read' })));
    expect(token).toStrictEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      refresh_token: expect.any(String),
      expires_in: 3600,
      scope: 'read',
      UUID: expect.stringMatching(UUID_RE),
      TENANT: DEMO.tenant,
      jti: expect.stringMatching(UUID_RE),
    });
    // The refresh token is opaque (not a JWT) and long enough to be unguessable.
    expect(token.refresh_token).not.toContain('.');
    expect(token.refresh_token.length).toBeGreaterThanOrEqual(32);

    const { header, claims } = decodeJwt(token.access_token);
    expect(header).toStrictEqual({ alg: 'EdDSA', typ: 'JWT', kid: expect.stringMatching(/^\S+$/) });
    expect(claims).toStrictEqual({
      UUID: token.UUID,
      TENANT: DEMO.tenant,
      scope: 'read',
      jti: token.jti,
      iat: expect.any(Number),
      exp: expect.any(Number),
      // RFC 9068's names for verifiers that know no UUID: the tenant's issuer (docs/api.md "OAuth discovery").
      iss: box.url(`/auth-oauth2/tenants/${DEMO.tenant}`),
      sub: token.UUID,
    });
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect(claims.iat).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    expect(claims.exp).toBe((claims.iat as number) + 3600);

    expect((await box.get(NEAREST, token.access_token)).status).toBe(200);
  });

  test('without a scope parameter anonymous gets read; each anonymous login is a new user and token id', async () => {
    const a = await okToken(await requestToken(box, anonymous()));
    const b = await okToken(await requestToken(box, anonymous()));
    expect([a.scope, b.scope]).toEqual(['read', 'read']);
    expect(a.UUID).not.toBe(b.UUID);
    expect(a.jti).not.toBe(b.jti);
    expect(a.refresh_token).not.toBe(b.refresh_token);
  });

  test('staff user gets read write, with a stable user id across logins', async () => {
    const a = await okToken(await requestToken(box, password(DEMO.staff.username, DEMO.staff.password)));
    expect(a).toMatchObject({ token_type: 'bearer', scope: 'read write', TENANT: DEMO.tenant, expires_in: 3600 });
    expect(a.UUID).toMatch(UUID_RE);
    expect(decodeJwt(a.access_token).claims).toMatchObject({ scope: 'read write', UUID: a.UUID });
    const both = password(DEMO.staff.username, DEMO.staff.password, { scope: 'read write' });
    const b = await okToken(await requestToken(box, both));
    expect(b.UUID).toBe(a.UUID);
    expect(b.scope).toBe('read write');
  });

  test('staff asking for read only gets read', async () => {
    const t = await okToken(await requestToken(box, password('kelner', 'kelner-demo-1', { scope: 'read' })));
    expect(t.scope).toBe('read');
    expect(decodeJwt(t.access_token).claims.scope).toBe('read');
  });

  test.each([['write'], ['read write'], ['admin']])('anonymous asking for %j is invalid_scope', async (scope) => {
    await expectOAuthError(await requestToken(box, anonymous({ scope })), 400, 'invalid_scope');
  });

  test('staff asking for a scope beyond its own is invalid_scope', async () => {
    await expectOAuthError(
      await requestToken(box, password('kelner', 'kelner-demo-1', { scope: 'read write admin' })),
      400,
      'invalid_scope',
    );
  });

  test('wrong staff password, unknown user, and an anonymous login with a password are invalid_grant', async () => {
    await expectOAuthError(await requestToken(box, password('kelner', 'wrong-password')), 400, 'invalid_grant');
    await expectOAuthError(await requestToken(box, password('kelner', '')), 400, 'invalid_grant');
    await expectOAuthError(await requestToken(box, password('nobody', 'kelner-demo-1')), 400, 'invalid_grant');
    await expectOAuthError(await requestToken(box, anonymous({ password: 'x' })), 400, 'invalid_grant');
  });

  test("staff users are per tenant: the demo password does not log in as tenant B's kelner", async () => {
    await expectOAuthError(await requestToken(box, password('kelner', 'kelner-demo-1'), tenantB), 400, 'invalid_grant');
    const b = await okToken(await requestToken(box, password('kelner', TENANT_B.staff.password), tenantB));
    expect(b).toMatchObject({ scope: 'read write', TENANT: TENANT_B.id });
    const a = await okToken(await requestToken(box, password('kelner', 'kelner-demo-1')));
    expect(b.UUID).not.toBe(a.UUID);
  });
});

describe('client authentication (401 invalid_client with WWW-Authenticate: Basic)', () => {
  test.each([
    ['a wrong client secret', { authorization: basic(DEMO.client.clientId, 'not-the-secret') }],
    ['an unknown client', { authorization: basic('no-such-client', DEMO.client.clientSecret) }],
    ['no Authorization header', { authorization: '' }],
    ['a Bearer instead of Basic', { authorization: 'Bearer abc' }],
    ['Basic credentials without a colon', { authorization: `Basic ${Buffer.from('demo-kiosk').toString('base64')}` }],
    ['an unknown tenant', { 'x-tenant': '00000000-0000-4000-8000-000000000000' }],
    ["another tenant's client", { 'x-tenant': TENANT_B.id }],
  ])('%s', async (_name, headers) => {
    await expectOAuthError(await requestToken(box, anonymous(), headers), 401, 'invalid_client');
  });
});

describe('malformed token requests (400)', () => {
  test.each([
    ['a missing x-tenant', { 'x-tenant': '' }],
    ['a non-UUID x-tenant', { 'x-tenant': 'demo' }],
    ['a JSON content type', { 'content-type': 'application/json' }],
    ['a text/plain content type', { 'content-type': 'text/plain' }],
  ])('%s is invalid_request', async (_name, headers) => {
    await expectOAuthError(await requestToken(box, anonymous(), headers), 400, 'invalid_request');
  });

  test('no content type at all is invalid_request', async () => {
    const res = await fetch(box.url('/auth-oauth2/oauth/token'), {
      method: 'POST',
      headers: { 'x-tenant': DEMO.tenant, authorization: basic() },
      body: Buffer.from(new URLSearchParams(anonymous()).toString()),
    });
    await expectOAuthError(res, 400, 'invalid_request');
  });

  test('missing grant_type or username is invalid_request', async () => {
    await expectOAuthError(await requestToken(box, { username: 'anonymous', password: '' }), 400, 'invalid_request');
    await expectOAuthError(await requestToken(box, { grant_type: 'password', password: '' }), 400, 'invalid_request');
    await expectOAuthError(await requestToken(box, {}), 400, 'invalid_request');
  });

  test('a repeated parameter is invalid_request (RFC 6749 3.1)', async () => {
    const send = (body: string) =>
      fetch(box.url('/auth-oauth2/oauth/token'), {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-tenant': DEMO.tenant,
          authorization: basic(),
        },
        body,
      });
    for (const body of [
      'grant_type=password&grant_type=refresh_token&username=anonymous&password=',
      'grant_type=password&username=anonymous&username=kelner&password=',
      'grant_type=password&username=anonymous&password=&scope=read&scope=write',
    ]) {
      await expectOAuthError(await send(body), 400, 'invalid_request');
    }
    expect((await send('grant_type=password&username=anonymous&password=')).status).toBe(200);
  });

  test.each([['client_credentials'], ['authorization_code'], ['PASSWORD']])(
    'grant_type %s is unsupported_grant_type',
    async (grant) => {
      await expectOAuthError(
        await requestToken(box, { ...anonymous(), grant_type: grant }),
        400,
        'unsupported_grant_type',
      );
    },
  );
});

describe('refresh grant', () => {
  test('returns new tokens for the same user; the old refresh token is spent', async () => {
    const first = await okToken(await requestToken(box, anonymous()));
    const second = await okToken(await requestToken(box, refresh(first.refresh_token)));
    expect(second).toStrictEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      refresh_token: expect.any(String),
      expires_in: 3600,
      scope: 'read',
      UUID: first.UUID,
      TENANT: DEMO.tenant,
      jti: expect.stringMatching(UUID_RE),
    });
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.jti).not.toBe(first.jti);
    expect(decodeJwt(second.access_token).claims).toMatchObject({ UUID: first.UUID, jti: second.jti });
    expect((await box.get(NEAREST, second.access_token)).status).toBe(200);
  });

  test('staff keeps read write across a refresh, and may narrow it to read', async () => {
    const staff = await okToken(await requestToken(box, password('kelner', 'kelner-demo-1')));
    const renewed = await okToken(await requestToken(box, refresh(staff.refresh_token)));
    expect(renewed).toMatchObject({ scope: 'read write', UUID: staff.UUID });
    const narrowed = await okToken(await requestToken(box, { ...refresh(renewed.refresh_token), scope: 'read' }));
    expect(narrowed).toMatchObject({ scope: 'read', UUID: staff.UUID });
  });

  test('reusing a spent refresh token is invalid_grant and revokes the newest token of its family', async () => {
    const first = await okToken(await requestToken(box, anonymous()));
    const second = await okToken(await requestToken(box, refresh(first.refresh_token)));
    const third = await okToken(await requestToken(box, refresh(second.refresh_token)));
    // An attacker replays the first (spent) token...
    await expectOAuthError(await requestToken(box, refresh(first.refresh_token)), 400, 'invalid_grant');
    // ...so the legitimate holder's newest refresh token no longer works either.
    await expectOAuthError(await requestToken(box, refresh(third.refresh_token)), 400, 'invalid_grant');
    await expectOAuthError(await requestToken(box, refresh(second.refresh_token)), 400, 'invalid_grant');
    // Other families are untouched.
    const unrelated = await okToken(await requestToken(box, anonymous()));
    await okToken(await requestToken(box, refresh(unrelated.refresh_token)));
  });

  test('a refresh token used twice at the same moment is honoured at most once', async () => {
    const first = await okToken(await requestToken(box, anonymous()));
    const results = await Promise.all([1, 2, 3].map(() => requestToken(box, refresh(first.refresh_token))));
    expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1);
    for (const r of results.filter((x) => x.status !== 200)) await expectOAuthError(r, 400, 'invalid_grant');
  });

  test('a refresh token of another client of the same tenant is invalid_grant', async () => {
    const b = await okToken(await requestToken(box, anonymous(), tenantB));
    await expectOAuthError(
      await requestToken(box, refresh(b.refresh_token), { ...tenantB, authorization: basicOf(TENANT_B.otherClient) }),
      400,
      'invalid_grant',
    );
  });

  test('a refresh token of another tenant is invalid_grant', async () => {
    const a = await okToken(await requestToken(box, anonymous()));
    await expectOAuthError(await requestToken(box, refresh(a.refresh_token), tenantB), 400, 'invalid_grant');
    const b = await okToken(await requestToken(box, anonymous(), tenantB));
    await expectOAuthError(await requestToken(box, refresh(b.refresh_token)), 400, 'invalid_grant');
  });

  test('an unknown refresh token is invalid_grant; a missing one is invalid_request', async () => {
    await expectOAuthError(await requestToken(box, refresh('not-a-token')), 400, 'invalid_grant');
    await expectOAuthError(await requestToken(box, { grant_type: 'refresh_token' }), 400, 'invalid_request');
  });

  test('a refresh token of another box is invalid_grant', async () => {
    const foreign = await okToken(await requestToken(other, anonymous()));
    await expectOAuthError(await requestToken(box, refresh(foreign.refresh_token)), 400, 'invalid_grant');
  });

  test('the refresh grant renews an expired access token', async () => {
    const t = await okToken(await requestToken(short, anonymous()));
    expect(t.expires_in).toBe(1);
    await new Promise((r) => setTimeout(r, 1500));
    await expectApiError(await short.get(NEAREST, t.access_token), 401, 'unauthorized');
    const renewed = await okToken(await requestToken(short, refresh(t.refresh_token)));
    expect(renewed.UUID).toBe(t.UUID);
    expect((await short.get(NEAREST, renewed.access_token)).status).toBe(200);
  });
});

describe('bearer tokens on the API', () => {
  const expectInvalidToken = async (res: Response): Promise<void> => {
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    await expectApiError(res, 401, 'unauthorized');
  };

  // RFC 6750 3.1: a request without any bearer credentials gets the bare challenge, no error code (a client that
  // did not know it needed a token); one that sent a token the box refuses gets error="invalid_token".
  const expectNoCredentials = async (res: Response): Promise<void> => {
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="venue-box"');
    await expectApiError(res, 401, 'unauthorized');
  };

  test('a missing token is 401 unauthorized with the bare WWW-Authenticate: Bearer realm="venue-box"', async () => {
    await expectNoCredentials(await box.get(NEAREST));
  });

  test.each([
    ['an empty bearer', 'Bearer '],
    ['Basic credentials', basic()],
    ['a token without a scheme', 'eyJhbGciOiJFZERTQSJ9.e30.AAAA'],
  ])('no bearer token (%s) is 401 with the bare challenge', async (_name, authorization) => {
    await expectNoCredentials(await box.get(NEAREST, undefined, { authorization }));
  });

  test.each([
    ['garbage', 'Bearer abc'],
    ['three garbage parts', 'Bearer a.b.c'],
  ])('a malformed token (%s) is 401', async (_name, authorization) => {
    await expectInvalidToken(await box.get(NEAREST, undefined, { authorization }));
  });

  test('a forged token (payload changed, signature kept) is 401', async () => {
    const t = await box.token();
    const [h, , s] = t.access_token.split('.');
    const claims = { ...decodeJwt(t.access_token).claims, scope: 'read write' };
    const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
    await expectInvalidToken(await box.get(NEAREST, forged));
  });

  test('a token with alg none or a truncated signature is 401', async () => {
    const t = await box.token();
    const [h, c, s] = t.access_token.split('.');
    const none = Buffer.from(JSON.stringify({ ...decodeJwt(t.access_token).header, alg: 'none' })).toString(
      'base64url',
    );
    await expectInvalidToken(await box.get(NEAREST, `${none}.${c}.`));
    await expectInvalidToken(await box.get(NEAREST, `${h}.${c}.`));
    await expectInvalidToken(await box.get(NEAREST, `${h}.${c}.${s!.slice(0, -4)}`));
  });

  test('a token signed by another box is 401', async () => {
    const foreign = await other.token();
    expect((await other.get(NEAREST, foreign.access_token)).status).toBe(200);
    await expectInvalidToken(await box.get(NEAREST, foreign.access_token));
  });

  test('an expired token is 401', async () => {
    const t = await short.token();
    expect((await short.get(NEAREST, t.access_token)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1500));
    await expectInvalidToken(await short.get(NEAREST, t.access_token));
  });

  test('x-tenant naming another tenant than the token is 403 forbidden', async () => {
    const t = await box.token();
    expect((await box.get(NEAREST, t.access_token, { 'x-tenant': DEMO.tenant })).status).toBe(200);
    await expectApiError(await box.get(NEAREST, t.access_token, { 'x-tenant': TENANT_B.id }), 403, 'forbidden');
    await expectApiError(
      await box.get(NEAREST, t.access_token, { 'x-tenant': '00000000-0000-4000-8000-000000000000' }),
      403,
      'forbidden',
    );
    const menu = `/menu-api/api/menu/${DEMO.menu}?channel=DINE_IN&instance=${DEMO.openVenue}`;
    await expectApiError(await box.get(menu, t.access_token, { 'x-tenant': TENANT_B.id }), 403, 'forbidden');
    const b = await okToken(await requestToken(box, anonymous(), tenantB));
    await expectApiError(await box.get(NEAREST, b.access_token, { 'x-tenant': DEMO.tenant }), 403, 'forbidden');
  });
});
