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
