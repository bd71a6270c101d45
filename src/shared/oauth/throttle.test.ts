import { describe, expect, test } from 'vitest';
import { OAuthError } from '../oauth-error.js';
import { createLoginThrottle, throttleAddress } from './throttle.js';

const OPTIONS = {
  accountAtAddress: { burst: 3, refillSeconds: 10 },
  account: { burst: 5, refillSeconds: 2 },
  address: { burst: 4, refillSeconds: 1 },
  maxConcurrentHashes: 1,
  maxQueuedHashes: 1,
};

function setup(options = OPTIONS) {
  let now = 1_000_000;
  let hashes = 0;
  const throttle = createLoginThrottle(options, () => now);
  const attempt = (account: string, address: string, right: boolean) =>
    throttle.verify(account, address, async () => {
      hashes += 1;
      return right;
    });
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (err: unknown) =>
        err instanceof OAuthError ? { error: err.error, status: err.status, retryAfter: err.retryAfterSeconds } : err,
    );
  return { throttle, attempt, refusal, advance: (ms: number) => (now += ms), hashes: () => hashes };
}

describe('login throttle', () => {
  test('failures per account and address run out, then refill one per refillSeconds; refused checks run no hash', async () => {
    const t = setup();
    for (let i = 0; i < 3; i++) expect(await t.attempt('kelner', 'a', false)).toBe(false);
    expect(await t.refusal(t.attempt('kelner', 'a', true))).toEqual({
      error: 'temporarily_unavailable',
      status: 429,
      retryAfter: 10,
    });
    expect(t.hashes()).toBe(3);
    t.advance(9_000);
    expect(await t.refusal(t.attempt('kelner', 'a', true))).toMatchObject({ retryAfter: 1 });
    t.advance(1_000);
    expect(await t.attempt('kelner', 'a', true)).toBe(true);
  });

  test('only failures count: the owner signs in from another address, and a success forgives its own typos', async () => {
    const t = setup({ ...OPTIONS, account: { burst: 50, refillSeconds: 2 }, address: { burst: 50, refillSeconds: 1 } });
    for (let i = 0; i < 3; i++) await t.attempt('kelner', 'attacker', false);
    expect(await t.attempt('kelner', 'tablet', true)).toBe(true);
    for (let i = 0; i < 2; i++) await t.attempt('kelner', 'tablet', false);
    expect(await t.attempt('kelner', 'tablet', true)).toBe(true);
    // Forgiven: three more typos allowed at the tablet.
    for (let i = 0; i < 3; i++) expect(await t.attempt('kelner', 'tablet', false)).toBe(false);
  });

  test('the account ceiling holds across addresses; the address limit across accounts', async () => {
    const t = setup();
    for (const address of ['a', 'a', 'a', 'b', 'b']) await t.attempt('kelner', address, false);
    expect(await t.refusal(t.attempt('kelner', 'c', false))).toMatchObject({ status: 429, retryAfter: 2 });
    for (const account of ['x', 'y', 'z']) await t.attempt(account, 'd', false);
    // 'd' has 1 of 4 left after 3 failures; one more failure empties it for every account.
    await t.attempt('w', 'd', false);
    expect(await t.refusal(t.attempt('kuchnia', 'd', true))).toMatchObject({ status: 429, retryAfter: 1 });
    expect(await t.attempt('kuchnia', 'e', true)).toBe(true);
  });

  test('at most maxConcurrentHashes run and maxQueuedHashes wait; more is refused at once', async () => {
    const roomy = { burst: 100, refillSeconds: 1 };
    const t = setup({ ...OPTIONS, accountAtAddress: roomy, account: roomy, address: roomy });
    let running = 0;
    let peak = 0;
    const releases: (() => void)[] = [];
    const slow = () =>
      t.throttle.verify('kelner', 'a', () => {
        running += 1;
        peak = Math.max(peak, running);
        return new Promise<boolean>((resolve) =>
          releases.push(() => {
            running -= 1;
            resolve(false);
          }),
        );
      });
    const first = slow();
    const second = slow();
    expect(await t.refusal(slow())).toMatchObject({ status: 429, retryAfter: 1 });
    expect(t.throttle.stats()).toMatchObject({ running: 1, queued: 1 });
    releases.shift()!();
    await first;
    await new Promise((r) => setImmediate(r));
    releases.shift()!();
    await second;
    expect(peak).toBe(1);
    expect(t.throttle.stats()).toMatchObject({ running: 0, queued: 0 });
  });

  test('a parallel burst is counted as it arrives, not after its hashes fail', async () => {
    const t = setup({ ...OPTIONS, maxConcurrentHashes: 10, maxQueuedHashes: 10 });
    const results = await Promise.all(Array.from({ length: 10 }, () => t.refusal(t.attempt('kelner', 'a', false))));
    expect(results.filter((r) => r === undefined)).toHaveLength(3);
    expect(t.hashes()).toBe(3);
  });
});

describe('known devices', () => {
  const ROOMY = { burst: 100, refillSeconds: 1 };

  test('a known device signs in whatever strangers did to the account; its failures spend its own budget only', async () => {
    const t = setup();
    const known = (device: string, right: boolean) => t.throttle.verify('kelner', 'tablet', async () => right, device);
    // Strangers on many addresses empty the account's shared budget.
    for (const address of ['a', 'b', 'c', 'd', 'e']) await t.attempt('kelner', address, false);
    expect(await t.refusal(t.attempt('kelner', 'tablet', true))).toMatchObject({ status: 429 });
    expect(await known('dev-1', true)).toBe(true);
    // Its own typos: accountAtAddress's limits (3 here), then 429 for that device, not for the other one.
    for (let i = 0; i < 3; i++) expect(await known('dev-1', false)).toBe(false);
    expect(await t.refusal(known('dev-1', true))).toMatchObject({ status: 429, retryAfter: 10 });
    expect(await known('dev-2', true)).toBe(true);
    // ...and none of it reached the strangers' buckets: address 'tablet' is untouched, the account still empty.
    t.advance(2_000);
    expect(await t.attempt('kuchnia', 'tablet', true)).toBe(true);
    expect(await t.attempt('kelner', 'f', false)).toBe(false);
    expect(await t.refusal(t.attempt('kelner', 'g', false))).toMatchObject({ status: 429 });
  });

  test("a known device waits in its own queue, served first, while the strangers' queue is full", async () => {
    const t = setup({ ...OPTIONS, accountAtAddress: ROOMY, account: ROOMY, address: ROOMY });
    const order: string[] = [];
    const releases: (() => void)[] = [];
    const slow = (who: string, device?: string) =>
      t.throttle.verify(
        'kelner',
        who,
        () =>
          new Promise<boolean>((resolve) => {
            order.push(who);
            releases.push(() => resolve(true));
          }),
        device,
      );
    const running = slow('stranger-1');
    const queued = slow('stranger-2');
    expect(await t.refusal(slow('stranger-3'))).toMatchObject({ status: 429, retryAfter: 1 });
    const known = slow('tablet', 'dev-1');
    expect(t.throttle.stats()).toMatchObject({ running: 1, queued: 2 });
    expect(await t.refusal(slow('tablet-2', 'dev-2'))).toMatchObject({ status: 429 });
    for (const p of [running, known, queued]) {
      await new Promise((r) => setImmediate(r));
      releases.shift()!();
      await p;
    }
    expect(order).toEqual(['stranger-1', 'tablet', 'stranger-2']);
  });
});

describe('throttleAddress', () => {
  test.each([
    ['127.0.0.1', '127.0.0.1'],
    ['', ''],
    ['::ffff:192.168.1.20', '192.168.1.20'],
    ['0000:0000:0000:0000:0000:ffff:c0a8:0114', '192.168.1.20'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:0000:0000:0000:0001', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('%s is throttled as %s', (text, expected) => {
    expect(throttleAddress(text)).toBe(expected);
  });
});
