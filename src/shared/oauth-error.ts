import type { Reply } from '../http/types.js';

/** RFC 6749 section 5.2 errors: the token endpoint keeps this shape instead of the API's. */
export type OAuthErrorCode =
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_request'
  | 'unsupported_grant_type'
  | 'invalid_scope';

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
  }

  get status(): number {
    return this.error === 'invalid_client' ? 401 : 400;
  }
}

/** The client credentials of an HTTP Basic header (RFC 6749 2.3.1); undefined when absent or malformed. */
export function parseBasic(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return undefined;
  return { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
}

/** The RFC 6749 5.2 error body; 401 with a Basic challenge for a bad client. */
export function oauthReply(err: OAuthError): Reply {
  return {
    status: err.status,
    body: { error: err.error, error_description: err.description },
    headers: err.status === 401 ? { 'WWW-Authenticate': 'Basic realm="venue-box"' } : {},
  };
}
