import { createPublicKey, type JsonWebKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  CENTRAL_DEMO,
  centralTokenRequest,
  hqTokenRequest,
  startTestCentral,
  type TestCentral,
} from './support/central.js';

/*
 * The central's token endpoint is the box's OAuth server (src/shared/oauth/server.ts) on PostgreSQL: the same
 * retry grace (docs/api.md "Token revocation") and sign-in throttle as test/interop-oauth.test.ts and
 * test/auth-throttle.test.ts check on the box.
 */

let central: TestCentral;
beforeAll(async () => {
  central = await startTestCentral({ refreshRetryGraceSeconds: 30 });
});
afterAll(async () => {
  await central.stop();
});

const tokenRequest = (form: Record<string, string>): Promise<Response> => centralTokenRequest(central, form);

const refresh = (token: string, scope?: string) =>
  tokenRequest({ grant_type: 'refresh_token', refresh_token: token, ...(scope ? { scope } : {}) });

async function signIn(): Promise<{ access_token: string; refresh_token: string }> {
  const res = await hqTokenRequest(central, 'centrala', 'centrala-demo-1');
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; refresh_token: string };
}

describe('a retried refresh at the central', () => {
  test('the same refresh token again within the grace gets the identical answer; the family stays usable', async () => {
    const first = await signIn();
    const answer = await refresh(first.refresh_token);
    expect(answer.status).toBe(200);
    const text = await answer.text();
    const retried = await refresh(first.refresh_token);
    expect(retried.status).toBe(200);
    expect(await retried.text()).toBe(text);
    const pair = JSON.parse(text) as { refresh_token: string };
    expect((await refresh(pair.refresh_token)).status).toBe(200);
  });

  test('refreshes racing with one token all get the one pair', async () => {
    const first = await signIn();
    const answers = await Promise.all([1, 2, 3].map(() => refresh(first.refresh_token)));
    const bodies = await Promise.all(answers.map((r) => r.text()));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(bodies).size).toBe(1);
  });

  test('a retry whose new refresh token was already used is reuse whatever the grace: the family is revoked', async () => {
    const first = await signIn();
    const second = (await (await refresh(first.refresh_token)).json()) as { refresh_token: string };
    const third = (await (await refresh(second.refresh_token)).json()) as { refresh_token: string };
    const replay = await refresh(first.refresh_token);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await (await refresh(third.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  test('a retry asking for another scope is not a retry: reuse', async () => {
    const first = await signIn();
    const renewed = (await (await refresh(first.refresh_token)).json()) as { refresh_token: string };
    expect((await refresh(first.refresh_token, 'read')).status).toBe(400);
    expect((await refresh(renewed.refresh_token)).status).toBe(400);
  });
});

describe('the sign-in throttle at the central', () => {
  /** 429 in RFC 6749's error shape, with a whole number of seconds in Retry-After. */
  async function expectThrottled(res: Response): Promise<void> {
    expect({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }).toMatchObject({
      status: 429,
      retryAfter: expect.stringMatching(/^[1-9]\d*$/),
      body: { error: 'temporarily_unavailable', error_description: expect.any(String) },
    });
  }

  test('wrong passwords for one account: five are checked, then 429 with Retry-After, the right one too', async () => {
    const wrong = async () => (await hqTokenRequest(central, 'centrala-2', 'nope')).status;
    for (let i = 0; i < 5; i++) expect(await wrong()).toBe(400);
    await expectThrottled(await hqTokenRequest(central, 'centrala-2', 'nope'));
    // Another account from the same address is not throttled by it.
    expect((await hqTokenRequest(central, 'centrala', 'centrala-demo-1')).status).toBe(200);
  });

  test('wrong client secrets: invalid_client, then 429', async () => {
    const basic = Buffer.from('no-such-client:x').toString('base64');
    const ask = () =>
      fetch(central.url('/auth-oauth2/oauth/token'), {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-tenant': CENTRAL_DEMO.tenant,
          authorization: `Basic ${basic}`,
        },
        body: new URLSearchParams({
          grant_type: 'password',
          username: 'centrala',
          password: 'centrala-demo-1',
        }).toString(),
      });
    for (let i = 0; i < 5; i++) expect((await ask()).status).toBe(401);
    await expectThrottled(await ask());
  });
});

describe('OAuth discovery at the central (docs/api.md "OAuth discovery")', () => {
  test('metadata and JWKS as on the box; a token verifies against the JWKS; refresh needs no x-tenant', async () => {
    const issuer = central.url(`/auth-oauth2/tenants/${CENTRAL_DEMO.tenant}`);
    const meta = await fetch(
      central.url(`/.well-known/oauth-authorization-server/auth-oauth2/tenants/${CENTRAL_DEMO.tenant}`),
    );
    expect(meta.status).toBe(200);
    expect(await meta.json()).toMatchObject({
      issuer,
      token_endpoint: `${issuer}/oauth/token`,
      jwks_uri: central.url('/.well-known/jwks.json'),
      grant_types_supported: ['password', 'refresh_token'],
      // The console's public client `hq-console` signs in with `none`.
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      response_types_supported: [],
    });
    const unknown = `/.well-known/oauth-authorization-server/auth-oauth2/tenants/00000000-0000-4000-8000-000000000000`;
    expect((await fetch(central.url(unknown))).status).toBe(404);

    const first = await signIn();
    const { keys } = (await (await fetch(central.url('/.well-known/jwks.json'))).json()) as { keys: JsonWebKey[] };
    const [header, payload, signature] = first.access_token.split('.') as [string, string, string];
    const jwk = keys.find((k) => k.kid === JSON.parse(Buffer.from(header, 'base64url').toString()).kid);
    expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    const key = createPublicKey({ key: jwk!, format: 'jwk' });
    expect(verify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url'))).toBe(true);
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toMatchObject({ iss: issuer });

    // A refresh without x-tenant (the refresh token names its tenant), at the plain endpoint.
    const basic = Buffer.from(`${CENTRAL_DEMO.client.clientId}:${CENTRAL_DEMO.client.clientSecret}`).toString('base64');
    const renewed = await fetch(central.url('/auth-oauth2/oauth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: first.refresh_token }).toString(),
    });
    expect(renewed.status).toBe(200);
    expect(await renewed.json()).toMatchObject({ TENANT: CENTRAL_DEMO.tenant });
  });
});
