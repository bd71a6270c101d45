import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, requestToken, startTestBox, type TestBox } from './support/box.js';

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

  test('a password grant without a password is invalid_request; the anonymous user sends it empty', async () => {
    const res = await requestToken(box, { grant_type: 'password', username: 'anonymous' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_request', error_description: 'password is required' });
    const staff = await requestToken(box, { grant_type: 'password', username: DEMO.staff.username });
    expect(((await staff.json()) as { error: string }).error).toBe('invalid_request');
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
