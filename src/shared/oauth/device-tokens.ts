import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Device tokens (docs/api.md "Sign-in throttling"), after OWASP's "device cookies": a device where a user signed
 * in with the right password gets a token naming that user, and its later sign-ins as that user are throttled on
 * a budget of their own, which guessers elsewhere cannot empty.
 *
 * `d1.<iat>.<device>.<tag>`: the issue time (seconds), a random device id and an HMAC over tenant, username, iat
 * and device under a key derived from the node's signing key. Nothing is stored per device: a token is checked
 * by its tag alone, so a Pi keeps no record of the devices it has seen (only a per-device bucket while that
 * device has failures, and those are capped with every other bucket: src/shared/token-bucket.ts).
 */
export const DEVICE_COOKIE = 'vb-device';
/** 90 days: a waiter back from a holiday is still known. Also the cookie's Max-Age. */
export const DEVICE_TTL_SECONDS = 90 * 24 * 60 * 60;
/** Tokens one cookie keeps (a tablet shared by several staff users), newest first: bounds the cookie's size. */
export const DEVICE_COOKIE_MAX_TOKENS = 4;
/** Longer presented values are not tokens: ignored without a look. */
const MAX_TOKEN_LENGTH = 128;

const TOKEN = /^d1\.(\d{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})$/;

/** The device id of a well-formed token (its tag unchecked), for telling a cookie's entries apart. */
export const deviceIdOf = (token: string): string | undefined => TOKEN.exec(token)?.[2];

/** The device tokens a `Cookie` header carries in `vb-device` (`~` between tokens), well-formed ones only. */
export function cookieDeviceTokens(header: string | undefined): string[] {
  if (!header) return [];
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== DEVICE_COOKIE) continue;
    return pair
      .slice(eq + 1)
      .trim()
      .split('~')
      .filter((t) => t.length <= MAX_TOKEN_LENGTH && TOKEN.test(t))
      .slice(0, DEVICE_COOKIE_MAX_TOKENS);
  }
  return [];
}

/**
 * The `Set-Cookie` value after a sign-in issued `issued`: it first, then the cookie's other devices' tokens (other
 * users of a shared tablet). HttpOnly (no script reads it), SameSite=Strict (no other site's page makes the
 * browser send it), Path=/auth-oauth2 (only the token endpoint sees it). No Secure: the box serves plain HTTP on
 * the venue LAN, where a browser would drop a Secure cookie; the token opens nothing, it only spares a budget.
 */
export function deviceCookie(issued: string, previous: readonly string[]): string {
  const id = deviceIdOf(issued);
  const tokens = [issued, ...previous.filter((t) => deviceIdOf(t) !== id)].slice(0, DEVICE_COOKIE_MAX_TOKENS);
  return `${DEVICE_COOKIE}=${tokens.join('~')}; Max-Age=${DEVICE_TTL_SECONDS}; Path=/auth-oauth2; HttpOnly; SameSite=Strict`;
}

export function createDeviceTokens(secretKey: Uint8Array, now: () => number) {
  const macKey = createHmac('sha256', secretKey).update('venue-box device token v1').digest();
  // Compared as text: base64url's last character carries unused bits, and another spelling of the tag is not it.
  const tag = (tenantId: string, username: string, iat: string, device: string): string =>
    createHmac('sha256', macKey)
      .update(`${tenantId}\0${username}\0${iat}\0${device}`)
      .digest()
      .subarray(0, 16)
      .toString('base64url');

  return {
    /** A token for this user on this device: the device id kept when the device is known (its budget with it). */
    issue(tenantId: string, username: string, device = randomBytes(16).toString('base64url')): string {
      const iat = String(Math.floor(now() / 1000));
      return `d1.${iat}.${device}.${tag(tenantId, username, iat, device)}`;
    },
    /**
     * The device id of the first presented token that is this user's and not expired; undefined when none is
     * (a stranger). A token from the future is taken: the box's clock may have been set back since it issued it.
     */
    deviceOf(tenantId: string, username: string, presented: readonly string[]): string | undefined {
      for (const token of presented) {
        const m = token.length <= MAX_TOKEN_LENGTH ? TOKEN.exec(token) : null;
        if (!m) continue;
        const [, iat = '', device = '', given = ''] = m;
        if (now() / 1000 - Number(iat) > DEVICE_TTL_SECONDS) continue;
        if (timingSafeEqual(Buffer.from(tag(tenantId, username, iat, device)), Buffer.from(given))) return device;
      }
      return undefined;
    },
  };
}

export type DeviceTokens = ReturnType<typeof createDeviceTokens>;
