import { describe, expect, test } from 'vitest';
import {
  cookieDeviceTokens,
  createDeviceTokens,
  DEVICE_TTL_SECONDS,
  deviceCookie,
  deviceIdOf,
} from './device-tokens.js';

const T = '4b0f8f4e-2d7e-4f7e-9a59-5c2f1e3d6a10';

function setup(key = new Uint8Array(64).fill(7)) {
  let now = 1_800_000_000_000;
  return { tokens: createDeviceTokens(key, () => now), advance: (ms: number) => (now += ms) };
}

describe('device tokens', () => {
  test("a token names its user's device: valid for that user and tenant only, by this node's key", () => {
    const { tokens } = setup();
    const token = tokens.issue(T, 'kelner');
    const device = deviceIdOf(token);
    expect(device).toMatch(/^[\w-]{22}$/);
    expect(tokens.deviceOf(T, 'kelner', [token])).toBe(device);
    expect(tokens.deviceOf(T, 'kuchnia', [token])).toBeUndefined();
    expect(tokens.deviceOf('another-tenant', 'kelner', [token])).toBeUndefined();
    expect(setup(new Uint8Array(64).fill(8)).tokens.deviceOf(T, 'kelner', [token])).toBeUndefined();
    // The first valid one of several wins; garbage and forged tags are skipped, never an error.
    // Another spelling of the same tag bits (base64url's last character has 4 unused bits) is refused too.
    const last = token.at(-1)!;
    const respelt = `${token.slice(0, -1)}${String.fromCharCode(last.charCodeAt(0) ^ 1)}`;
    expect(tokens.deviceOf(T, 'kelner', [respelt])).toBeUndefined();
    const forged = `${token.slice(0, -22)}${token.at(-22) === 'A' ? 'B' : 'A'}${token.slice(-21)}`;
    expect(tokens.deviceOf(T, 'kelner', ['', 'x'.repeat(10_000), forged, token])).toBe(device);
    expect(tokens.deviceOf(T, 'kelner', [forged])).toBeUndefined();
  });

  test('renewed with the same device id; expires after 90 days unless renewed', () => {
    const t = setup();
    const token = t.tokens.issue(T, 'kelner');
    const device = deviceIdOf(token)!;
    t.advance(DEVICE_TTL_SECONDS * 1000 - 1000);
    const renewed = t.tokens.issue(T, 'kelner', device);
    expect(deviceIdOf(renewed)).toBe(device);
    t.advance(2000);
    expect(t.tokens.deviceOf(T, 'kelner', [token])).toBeUndefined();
    expect(t.tokens.deviceOf(T, 'kelner', [renewed])).toBe(device);
  });

  test('the cookie keeps the newest token per device, at most four, with its flags', () => {
    const { tokens } = setup();
    const old = ['a', 'b', 'c', 'd'].map((u) => tokens.issue(T, u));
    const renewedA = tokens.issue(T, 'a', deviceIdOf(old[0]!));
    const header = deviceCookie(renewedA, old);
    const [pair, ...flags] = header.split('; ');
    expect(flags).toEqual(['Max-Age=7776000', 'Path=/auth-oauth2', 'HttpOnly', 'SameSite=Strict']);
    expect(cookieDeviceTokens(`theme=dark; ${pair}`)).toEqual([renewedA, old[1], old[2], old[3]]);
    const e = tokens.issue(T, 'e');
    expect(cookieDeviceTokens(deviceCookie(e, old).split('; ')[0])).toEqual([e, ...old.slice(0, 3)]);
    expect(cookieDeviceTokens(undefined)).toEqual([]);
    expect(cookieDeviceTokens(`vb-device=junk~${e}`)).toEqual([e]);
  });
});
