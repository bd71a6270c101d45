import type { Reply } from '../http/types.js';
import { OAUTH_ERRORS, type OAuthErrorCode } from './errors.js';

/** RFC 6749 section 5.2 errors: the token endpoint keeps this shape instead of the API's (codes: src/shared/errors.ts). */
export type { OAuthErrorCode };

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    /** Whole seconds until a retry can succeed; only with temporarily_unavailable. */
    readonly retryAfterSeconds?: number,
  ) {
    super(description);
  }

  get status(): number {
    return OAUTH_ERRORS[this.error].status;
  }
}

/**
 * The client credentials of an HTTP Basic header; undefined when absent or malformed. RFC 6749 2.3.1 has the
 * client form-urlencode its id and secret before Base64 (oauth4webapi sends `demo%2Dkiosk:...`), so both are
 * decoded as form fields are ('+' is a space, %XX a byte of UTF-8). A client that sends them raw (curl -u) reads
 * the same as long as they hold no '%' or '+'.
 */
export function parseBasic(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return undefined;
  const clientId = formDecode(decoded.slice(0, colon));
  const clientSecret = formDecode(decoded.slice(colon + 1));
  if (clientId === undefined || clientSecret === undefined || clientId === '') return undefined;
  return { clientId, clientSecret };
}

/** application/x-www-form-urlencoded decoding of one value; undefined for a malformed %-escape. */
function formDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** The RFC 6749 5.2 error body; 401 with a Basic challenge for a bad client, 429 with Retry-After. */
export function oauthReply(err: OAuthError): Reply {
  const headers: Record<string, string> = {};
  if (err.status === 401) headers['WWW-Authenticate'] = 'Basic realm="venue-box"';
  if (err.status === 429) headers['Retry-After'] = String(Math.max(1, Math.ceil(err.retryAfterSeconds ?? 1)));
  return { status: err.status, body: { error: err.error, error_description: err.description }, headers };
}
