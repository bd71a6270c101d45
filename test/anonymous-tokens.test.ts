import { request } from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { basic, DEMO, startTestBox, type TestBox } from './support/box.js';

// auth.anonymous.perAddressPerMinute 30: 30 new anonymous users from one address at once, then one per 2 s.
let box: TestBox;
beforeAll(async () => {
  box = await startTestBox({ config: { auth: { anonymous: { perAddressPerMinute: 30 } } } });
});
afterAll(async () => {
  await box?.stop();
});

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: { error?: string; error_description?: string; access_token?: string; refresh_token?: string; scope?: string };
}

/** A token request from a chosen source address (all of 127.0.0.0/8 reaches the box on 127.0.0.1). */
function tokenFrom(localAddress: string, form: Record<string, string>): Promise<Answer> {
  const body = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const req = request(box.url('/auth-oauth2/oauth/token'), {
      method: 'POST', localAddress, agent: false,
      headers: {
        'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body),
        'x-tenant': DEMO.tenant, authorization: basic(),
      },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => {
        const retryAfter = res.headers['retry-after'];
        resolve({
          status: res.statusCode ?? 0, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
          body: JSON.parse(text) as Answer['body'],
        });
      });
    });
    req.on('error', reject).end(body);
  });
}

const ANONYMOUS = { grant_type: 'password', username: 'anonymous', password: '' };

test('40 anonymous tokens from one address: 429 past the budget; another address, staff and refresh still served', async () => {
  const flooder = '127.0.0.1';
  const answers: Answer[] = [];
  for (let i = 0; i < 40; i++) answers.push(await tokenFrom(flooder, ANONYMOUS));
  const granted = answers.filter((a) => a.status === 200);
  // The budget of 30, and one more if the run took over 2 s.
  expect(granted.length).toBeGreaterThanOrEqual(30);
  expect(granted.length).toBeLessThanOrEqual(31);
  expect(answers.slice(0, 30).every((a) => a.status === 200)).toBe(true);
  for (const a of answers.slice(granted.length)) {
    expect(a).toMatchObject({
      status: 429, retryAfter: expect.stringMatching(/^[12]$/),
      body: { error: 'temporarily_unavailable', error_description: expect.any(String) },
    });
  }

  // Another client of the venue LAN is not affected.
  expect(await tokenFrom('127.0.0.2', ANONYMOUS)).toMatchObject({ status: 200, body: { scope: 'read' } });
  // Neither are staff sign-in nor refresh, from the throttled address itself.
  expect(await tokenFrom(flooder, { grant_type: 'password', username: 'kelner', password: DEMO.staff.password }))
    .toMatchObject({ status: 200, body: { scope: 'read write' } });
  expect(await tokenFrom(flooder, { grant_type: 'refresh_token', refresh_token: granted[0]!.body.refresh_token! }))
    .toMatchObject({ status: 200, body: { scope: 'read' } });
  // And the budget refills: one new anonymous user every 2 s.
  const wait = Number((await tokenFrom(flooder, ANONYMOUS)).retryAfter);
  await new Promise((r) => setTimeout(r, wait * 1000 + 100));
  expect(await tokenFrom(flooder, ANONYMOUS)).toMatchObject({ status: 200 });
});
