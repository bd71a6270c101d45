import { execFile } from 'node:child_process';
import { createPublicKey, type JsonWebKey, verify } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { promisify } from 'node:util';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { basic, DEMO, requestToken, startTestBox, type TestBox } from './support/box.js';

// The token endpoint driven by clients nobody here wrote: oauth4webapi (RFC 6749 2.3.1's form-urlencoded
// Basic credentials, client_secret_post) and curl. docs/api.md "Token revocation", "Errors".
let box: TestBox;
beforeAll(async () => {
  box = await startTestBox();
});
afterAll(async () => {
  await box.stop();
});

const run = promisify(execFile);
const as = (): oauth.AuthorizationServer => ({
  issuer: box.url('/'),
  token_endpoint: box.url('/auth-oauth2/oauth/token'),
});
const client: oauth.Client = { client_id: DEMO.client.clientId };
const options = () => ({ [oauth.allowInsecureRequests]: true, headers: { 'x-tenant': DEMO.tenant } });
const anonymous = { username: 'anonymous', password: '', scope: 'read' };

describe('oauth4webapi', () => {
  test.each([
    ['client_secret_basic (form-urlencoded, then Base64)', oauth.ClientSecretBasic],
    ['client_secret_post', oauth.ClientSecretPost],
  ])('%s: a password grant, then a refresh, as the interface uses them', async (_name, auth) => {
    const res = await oauth.genericTokenEndpointRequest(
      as(),
      client,
      auth(DEMO.client.clientSecret),
      'password',
      anonymous,
      options(),
    );
    const tokens = await oauth.processGenericTokenEndpointResponse(as(), client, res);
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'read', expires_in: 3600, TENANT: DEMO.tenant });
    expect((await box.get('/venue-api/api/nearest?lat=50&lng=20', tokens.access_token)).status).toBe(200);

    const renewed = await oauth.processRefreshTokenResponse(
      as(),
      client,
      await oauth.refreshTokenGrantRequest(
        as(),
        client,
        auth(DEMO.client.clientSecret),
        tokens.refresh_token!,
        options(),
      ),
    );
    expect(renewed.UUID).toBe(tokens.UUID);
    expect(renewed.refresh_token).not.toBe(tokens.refresh_token);
  });

  test('a staff password grant', async () => {
    const res = await oauth.genericTokenEndpointRequest(
      as(),
      client,
      oauth.ClientSecretBasic(DEMO.client.clientSecret),
      'password',
      { username: DEMO.staff.username, password: DEMO.staff.password },
      options(),
    );
    expect((await oauth.processGenericTokenEndpointResponse(as(), client, res)).scope).toBe('read write');
  });

  test('a wrong secret is invalid_client (401) through either method', async () => {
    for (const auth of [oauth.ClientSecretBasic, oauth.ClientSecretPost]) {
      const res = await oauth.genericTokenEndpointRequest(
        as(),
        client,
        auth('not-the-secret'),
        'password',
        anonymous,
        options(),
      );
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'invalid_client' });
    }
  });
});

describe('curl', () => {
  const curl = async (args: string[]) => {
    const { stdout } = await run('curl', [
      '-s',
      '-w',
      '\n%{http_code}',
      '-H',
      `x-tenant: ${DEMO.tenant}`,
      ...args,
      box.url('/auth-oauth2/oauth/token'),
    ]);
    const [body, status] = [stdout.slice(0, stdout.lastIndexOf('\n')), stdout.slice(stdout.lastIndexOf('\n') + 1)];
    return { status: Number(status), body: JSON.parse(body) as Record<string, unknown> };
  };

  test('-u id:secret (raw Basic, as the README shows) still works', async () => {
    const res = await curl([
      '-u',
      `${DEMO.client.clientId}:${DEMO.client.clientSecret}`,
      '-d',
      'grant_type=password&scope=read&username=anonymous&password=',
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'bearer', scope: 'read' });
  });

  test('client_id and client_secret in the form (client_secret_post)', async () => {
    const res = await curl([
      '--data-urlencode',
      `client_id=${DEMO.client.clientId}`,
      '--data-urlencode',
      `client_secret=${DEMO.client.clientSecret}`,
      '-d',
      'grant_type=password&username=anonymous&password=',
    ]);
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('read');
  });

  test('both methods at once is invalid_request (RFC 6749 2.3)', async () => {
    const res = await curl([
      '-u',
      `${DEMO.client.clientId}:${DEMO.client.clientSecret}`,
      '-d',
      `client_id=${DEMO.client.clientId}&client_secret=${DEMO.client.clientSecret}&grant_type=password&username=anonymous&password=`,
    ]);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test("the box has no public client: the central's hq-console without a secret is invalid_client", async () => {
    const res = await curl(['-d', 'client_id=hq-console&grant_type=password&username=anonymous&password=']);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });
});

describe('token endpoint details', () => {
  test('a malformed %-escape in Basic credentials is invalid_client', async () => {
    const res = await requestToken(box, anonymous, {
      authorization: `Basic ${Buffer.from('demo%2-kiosk:x').toString('base64')}`,
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
  });

  test("a staff password grant without a password is invalid_request; the anonymous user's may be left out", async () => {
    // Clients that drop empty form values (authlib) never send `password=`: test/interop-authlib.test.ts.
    const res = await requestToken(box, { grant_type: 'password', username: 'anonymous' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ token_type: 'bearer', scope: 'read' });
    const staff = await requestToken(box, { grant_type: 'password', username: DEMO.staff.username });
    expect(staff.status).toBe(400);
    expect(await staff.json()).toMatchObject({ error: 'invalid_request', error_description: 'password is required' });
    const wrong = await requestToken(box, { grant_type: 'password', username: 'anonymous', password: 'x' });
    expect(((await wrong.json()) as { error: string }).error).toBe('invalid_grant');
  });

  test('a 403 for a missing scope carries WWW-Authenticate: Bearer error="insufficient_scope" (RFC 6750 3.1)', async () => {
    const t = await box.token();
    const res = await box.get(`/ordering-api/api/orders?venue=${DEMO.openVenue}`, t.access_token);
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="write"');
    expect(await res.json()).toMatchObject({ codes: [{ code: 'forbidden' }] });
  });
});

describe('a retried refresh (auth.refreshRetryGraceSeconds)', () => {
  const refreshWith = (token: string) =>
    oauth.refreshTokenGrantRequest(as(), client, oauth.ClientSecretBasic(DEMO.client.clientSecret), token, options());
  const nearest = (token: string) => box.get('/venue-api/api/nearest?lat=50&lng=20', token).then((r) => r.status);

  test('the same refresh token again within the grace gets the identical answer; the family stays usable', async () => {
    const first = await box.token();
    const answer = await refreshWith(first.refresh_token);
    expect(answer.status).toBe(200);
    const text = await answer.text();
    // The client lost that answer and retries: byte for byte the same pair, nothing revoked.
    const retried = await refreshWith(first.refresh_token);
    expect(retried.status).toBe(200);
    expect(await retried.text()).toBe(text);
    const pair = await oauth.processRefreshTokenResponse(
      as(),
      client,
      new Response(text, { headers: { 'content-type': 'application/json' } }),
    );
    expect(await nearest(pair.access_token)).toBe(200);
    expect(await nearest(first.access_token)).toBe(200);
    const next = await oauth.processRefreshTokenResponse(as(), client, await refreshWith(pair.refresh_token!));
    expect(await nearest(next.access_token)).toBe(200);
  });

  test('refreshes racing with one token all get the one pair', async () => {
    const first = await box.token();
    const answers = await Promise.all(
      [1, 2, 3].map(() => requestToken(box, { grant_type: 'refresh_token', refresh_token: first.refresh_token })),
    );
    const bodies = await Promise.all(answers.map((r) => r.text()));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(bodies).size).toBe(1);
  });

  test('a retry whose new refresh token was already used is reuse whatever the grace: the family is revoked', async () => {
    const first = await box.token();
    const second = await oauth.processRefreshTokenResponse(as(), client, await refreshWith(first.refresh_token));
    const third = await oauth.processRefreshTokenResponse(as(), client, await refreshWith(second.refresh_token!));
    const replay = await refreshWith(first.refresh_token);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await nearest(third.access_token)).toBe(401);
    expect((await refreshWith(third.refresh_token!)).status).toBe(400);
  });

  test('a retry asking for another scope is not a retry: reuse', async () => {
    const staff = await box.token(DEMO.staff.username, DEMO.staff.password);
    const renewed = await oauth.processRefreshTokenResponse(as(), client, await refreshWith(staff.refresh_token));
    const narrowed = await oauth.refreshTokenGrantRequest(
      as(),
      client,
      oauth.ClientSecretBasic(DEMO.client.clientSecret),
      staff.refresh_token,
      { ...options(), additionalParameters: { scope: 'read' } },
    );
    expect(narrowed.status).toBe(400);
    expect(await nearest(renewed.access_token)).toBe(401);
  });

  test('outside the grace a second presentation revokes the family, as before', async () => {
    const short = await startTestBox({ config: { auth: { refreshRetryGraceSeconds: 1 } } });
    try {
      const first = await short.token();
      const res = await requestToken(short, { grant_type: 'refresh_token', refresh_token: first.refresh_token });
      const second = (await res.json()) as { access_token: string };
      await new Promise((r) => setTimeout(r, 1600));
      const late = await requestToken(short, { grant_type: 'refresh_token', refresh_token: first.refresh_token });
      expect(late.status).toBe(400);
      expect((await short.get('/venue-api/api/nearest?lat=50&lng=20', second.access_token)).status).toBe(401);
    } finally {
      await short.stop();
    }
  });
});

describe('OAuth discovery (RFC 8414) and the JWKS: a client that knows only the issuer', () => {
  const issuer = () => new URL(box.url(`/auth-oauth2/tenants/${DEMO.tenant}`));
  const insecure = { [oauth.allowInsecureRequests]: true };
  const discover = async () =>
    oauth.processDiscoveryResponse(
      issuer(),
      await oauth.discoveryRequest(issuer(), { algorithm: 'oauth2', ...insecure }),
    );
  const basicAuth = () => oauth.ClientSecretBasic(DEMO.client.clientSecret);

  test('discovery names the per-tenant token endpoint, the JWKS and what the endpoint takes', async () => {
    const meta = await discover();
    expect(meta).toStrictEqual({
      issuer: issuer().href,
      token_endpoint: `${issuer().href}/oauth/token`,
      jwks_uri: box.url('/.well-known/jwks.json'),
      grant_types_supported: ['password', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: ['read', 'write'],
      response_types_supported: [],
      service_documentation: box.url('/docs/api'),
    });
  });

  test('the token call and its refresh at the discovered endpoint, with no x-tenant', async () => {
    const as = await discover();
    const res = await oauth.genericTokenEndpointRequest(as, client, basicAuth(), 'password', anonymous, insecure);
    const tokens = await oauth.processGenericTokenEndpointResponse(as, client, res);
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'read', TENANT: DEMO.tenant });
    const renewed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, basicAuth(), tokens.refresh_token!, insecure),
    );
    expect(renewed.UUID).toBe(tokens.UUID);
    expect((await box.get('/venue-api/api/nearest?lat=50&lng=20', renewed.access_token)).status).toBe(200);
    // client_secret_post works there too.
    const post = await oauth.genericTokenEndpointRequest(
      as,
      client,
      oauth.ClientSecretPost(DEMO.client.clientSecret),
      'password',
      { username: DEMO.staff.username, password: DEMO.staff.password },
      insecure,
    );
    expect((await oauth.processGenericTokenEndpointResponse(as, client, post)).scope).toBe('read write');
  });

  test('the access token verifies against the JWKS (node:crypto JWK import); iss is the issuer, sub the user', async () => {
    const as = await discover();
    const res = await oauth.genericTokenEndpointRequest(as, client, basicAuth(), 'password', anonymous, insecure);
    const tokens = await oauth.processGenericTokenEndpointResponse(as, client, res);
    const jwksAnswer = await fetch(as.jwks_uri!);
    expect(jwksAnswer.headers.get('cache-control')).toBe('public, max-age=300');
    const { keys } = (await jwksAnswer.json()) as { keys: (JsonWebKey & { kid: string })[] };
    const [header, payload, signature] = tokens.access_token.split('.') as [string, string, string];
    const head = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg: string; kid: string };
    const jwk = keys.find((k) => k.kid === head.kid);
    expect(jwk).toStrictEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: expect.any(String),
      kid: head.kid,
      alg: 'EdDSA',
      use: 'sig',
    });
    const key = createPublicKey({ key: jwk!, format: 'jwk' });
    expect(head.alg).toBe(jwk!.alg);
    expect(verify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url'))).toBe(true);
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: as.issuer, sub: tokens.UUID, UUID: tokens.UUID, TENANT: DEMO.tenant });
    // A token of another box does not verify with this key set.
    const tampered = Buffer.from(
      `${header}.${Buffer.from(JSON.stringify({ ...claims, scope: 'read write' })).toString('base64url')}`,
    );
    expect(verify(null, tampered, key, Buffer.from(signature, 'base64url'))).toBe(false);
  });

  test('a refresh at the plain endpoint without x-tenant takes the tenant from the refresh token', async () => {
    const first = await box.token();
    const noTenant = (refresh_token: string, headers: Record<string, string> = {}) =>
      fetch(box.url('/auth-oauth2/oauth/token'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(), ...headers },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token }).toString(),
      });
    const res = await noTenant(first.refresh_token);
    expect(res.status).toBe(200);
    const renewed = (await res.json()) as { UUID: string; TENANT: string; refresh_token: string };
    expect(renewed).toMatchObject({ UUID: first.UUID, TENANT: DEMO.tenant });
    // A header naming another tenant is still refused, as is an unknown token; a password grant still needs one.
    const other = await noTenant(renewed.refresh_token, { 'x-tenant': '00000000-0000-4000-8000-000000000000' });
    expect(other.status).toBe(401);
    expect(await noTenant('not-a-token').then((r) => r.json())).toMatchObject({ error: 'invalid_grant' });
    const password = await fetch(box.url('/auth-oauth2/oauth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic() },
      body: 'grant_type=password&username=anonymous&password=',
    });
    expect(await password.json()).toMatchObject({ error: 'invalid_request' });
  });

  test('the per-tenant endpoint refuses an x-tenant naming another tenant', async () => {
    const res = await requestToken(
      { url: (p) => box.url(p.replace('/auth-oauth2/', `/auth-oauth2/tenants/${DEMO.tenant}/`)) },
      { grant_type: 'password', username: 'anonymous', password: '' },
      { 'x-tenant': '00000000-0000-4000-8000-000000000000' },
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_request' });
  });

  test('an unknown tenant has no metadata; a Host that is not host[:port] is refused, never reflected', async () => {
    const unknown = await fetch(
      box.url('/.well-known/oauth-authorization-server/auth-oauth2/tenants/00000000-0000-4000-8000-000000000000'),
    );
    expect(unknown.status).toBe(404);
    const path = `/.well-known/oauth-authorization-server/auth-oauth2/tenants/${DEMO.tenant}`;
    const withHost = (host: string, extra: Record<string, string> = {}) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: box.port, path, headers: { host, ...extra } }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        req.end();
      });
    for (const host of ['evil.example/x', 'a@b', 'x"y', 'host:99999', '[::1', '300.1.1.1', '-bad-.example']) {
      const res = await withHost(host);
      expect([host, res.status]).toEqual([host, 400]);
      expect(res.body).not.toContain('http://');
    }
    // A sane name is used as the origin the client asked at; a proxy's X-Forwarded-Proto: https makes it https.
    const named = await withHost('Box.Local:8080', { 'x-forwarded-proto': 'https' });
    expect(JSON.parse(named.body)).toMatchObject({
      issuer: `https://box.local:8080/auth-oauth2/tenants/${DEMO.tenant}`,
    });
    expect(JSON.parse((await withHost('[::1]:80')).body).jwks_uri).toBe('http://[::1]:80/.well-known/jwks.json');
  });
});
