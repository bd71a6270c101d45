import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { skipWithout } from './support/system-packages.js';

// The token endpoint and OAuth discovery driven by authlib (Debian's python3-authlib, unmodified), a client nobody
// here wrote: docs/api.md "OAuth discovery", "Errors". authlib's OAuth2Client is the class its requests and httpx
// sessions (OAuth2Session, AsyncOAuth2Client) extend: the grants, the form (which drops empty values, so an
// anonymous `password=` never arrives), client authentication, token parsing and the automatic refresh are all
// its own. Debian's package brings neither requests nor httpx, so its session is a urllib transport here that
// sends what requests would (a dict body form-urlencoded, with that Content-Type). Run with /usr/bin/python3: the
// Debian package is installed for it, not for any other python on PATH.
const skip = skipWithout(import.meta.url, 'python3-authlib');

const CLIENT = `
import json, os, sys, time, urllib.error, urllib.parse, urllib.request
os.environ['AUTHLIB_INSECURE_TRANSPORT'] = '1'  # the box speaks plain HTTP on the venue LAN
from authlib.oauth2.client import OAuth2Client
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from authlib.jose import JsonWebKey, jwt

base, tenant, client_id, secret, staff, staff_password = sys.argv[1:]

class Answer:
    def __init__(self, status, body):
        self.status_code, self.body = status, body
    def json(self):
        return json.loads(self.body)
    def raise_for_status(self):
        raise RuntimeError('HTTP %d: %s' % (self.status_code, self.body))

class Session:
    """What authlib asks of a session (requests' post): the form in data, authlib's ClientAuth in auth."""
    def post(self, url, data=None, headers=None, auth=None, **kwargs):
        headers = dict(headers or {})
        body = urllib.parse.urlencode(data or {})
        headers.setdefault('Content-Type', 'application/x-www-form-urlencoded')
        if auth is not None:
            url, headers, body = auth.prepare('POST', url, headers, body)
        request = urllib.request.Request(url, data=body.encode(), headers=headers, method='POST')
        try:
            with urllib.request.urlopen(request) as res:
                return Answer(res.status, res.read().decode())
        except urllib.error.HTTPError as err:
            return Answer(err.code, err.read().decode())

def get_json(url):
    with urllib.request.urlopen(url) as res:
        return json.loads(res.read().decode())

def attempt(fn):
    try:
        token = fn()
        return {'ok': True, 'scope': token.get('scope'), 'user': token.get('UUID'), 'tenant': token.get('TENANT')}
    except Exception as err:
        return {'ok': False, 'error': getattr(err, 'error', None) or repr(err), 'description': getattr(err, 'description', None)}

out = {}
plain = base + '/auth-oauth2/oauth/token'
headers = {'x-tenant': tenant, 'Accept': 'application/json'}

# 1. The README's call: an anonymous token with Basic client auth and x-tenant. authlib drops password=''.
client = OAuth2Client(Session(), client_id, secret, token_endpoint_auth_method='client_secret_basic')
out['anonymous'] = attempt(lambda: client.fetch_token(plain, username='anonymous', password='', headers=headers))
# 2. Its refresh, without x-tenant: the refresh token names the tenant.
out['refresh'] = attempt(lambda: client.refresh_token(plain))

# 3. Discovery: the tenant's metadata, checked by authlib's RFC 8414 validators. Each step reports on its own:
# a step that fails says how, and the later ones still run where they can.
issuer = base + '/auth-oauth2/tenants/' + tenant
try:
    meta = AuthorizationServerMetadata(get_json(base + '/.well-known/oauth-authorization-server/auth-oauth2/tenants/' + tenant))
except Exception as err:
    print(json.dumps(dict(out, metadata={'error': repr(err)})))
    sys.exit(0)
problems = []
for key in AuthorizationServerMetadata.REGISTRY_KEYS:
    # authlib 1.2 wants a non-empty response_types_supported; the box has no authorization endpoint, so it lists
    # none ([]: docs/api.md "OAuth discovery"). Every other field passes authlib's checks.
    if key == 'response_types_supported':
        continue
    try:
        getattr(meta, 'validate_' + key)()
    except ValueError as err:
        problems.append(str(err))
out['metadata'] = {'problems': problems, 'issuer': meta['issuer'], 'response_types_supported': meta['response_types_supported']}

# 4. A client configured from the metadata alone (no x-tenant anywhere): a staff token by client_secret_post, then
# authlib's automatic refresh of an expired token (ensure_active_token refreshes at the metadata's token_endpoint).
auto = OAuth2Client(Session(), client_id, secret, token_endpoint_auth_method='client_secret_post',
                    token_endpoint=meta['token_endpoint'])
out['discovered'] = attempt(lambda: auto.fetch_token(username=staff, password=staff_password))
first = auto.token['access_token'] if auto.token else None
if auto.token:
    auto.token['expires_at'] = int(time.time()) - 10
    out['autoRefresh'] = attempt(lambda: auto.ensure_active_token(auto.token) and auto.token)
    out['autoRefreshNewToken'] = auto.token['access_token'] != first

# 5. The access token verified against the JWKS by authlib's JOSE (EdDSA, an OKP key), iss and exp checked.
try:
    keys = JsonWebKey.import_key_set(get_json(meta['jwks_uri']))
    claims = jwt.decode(auto.token['access_token'], keys,
                        claims_options={'iss': {'essential': True, 'value': issuer}, 'sub': {'essential': True}})
    claims.validate()
    out['verified'] = {'ok': True, 'iss': claims['iss'], 'sub': claims['sub'], 'UUID': claims['UUID']}
except Exception as err:
    out['verified'] = {'ok': False, 'error': repr(err)}

print(json.dumps(out))
`;

let box: TestBox;
beforeAll(async () => {
  if (!skip) box = await startTestBox();
});
afterAll(async () => {
  await box?.stop();
});

describe.skipIf(skip)('authlib (python3-authlib)', () => {
  test('an anonymous token and its refresh without x-tenant; discovery, automatic refresh and the JWKS', async () => {
    const { stdout } = await promisify(execFile)('/usr/bin/python3', [
      '-c',
      CLIENT,
      box.url(''),
      DEMO.tenant,
      DEMO.client.clientId,
      DEMO.client.clientSecret,
      DEMO.staff.username,
      DEMO.staff.password,
    ]);
    const out = JSON.parse(stdout) as Record<string, Record<string, unknown>>;
    // Whole objects, so that a refusal shows its error and description in the diff.
    const user = expect.stringMatching(/^[0-9a-f-]{36}$/);
    expect(out.anonymous).toStrictEqual({ ok: true, scope: 'read', tenant: DEMO.tenant, user });
    expect(out.refresh).toStrictEqual({ ok: true, scope: 'read', tenant: DEMO.tenant, user: out.anonymous!.user });
    expect(out.metadata).toStrictEqual({
      problems: [],
      issuer: box.url(`/auth-oauth2/tenants/${DEMO.tenant}`),
      response_types_supported: [],
    });
    expect(out.discovered).toStrictEqual({ ok: true, scope: 'read write', tenant: DEMO.tenant, user });
    expect(out.autoRefresh).toStrictEqual({
      ok: true,
      scope: 'read write',
      tenant: DEMO.tenant,
      user: out.discovered!.user,
    });
    expect(out.autoRefreshNewToken).toBe(true);
    expect(out.verified).toStrictEqual({
      ok: true,
      iss: box.url(`/auth-oauth2/tenants/${DEMO.tenant}`),
      sub: out.discovered!.user,
      UUID: out.discovered!.user,
    });
  });
});
