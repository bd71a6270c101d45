/** One catalog of API error codes and their HTTP statuses (README "Errors"). */
export const STATUS = {
  invalidBody: 400,
  invalidField: 400,
  unauthorized: 401,
  forbidden: 403,
  notFound: 404,
  methodNotAllowed: 405,
  conflict: 409,
  insufficientStock: 409,
  unitMismatch: 409,
  /** Sync (src/shared/sync-protocol.ts): a batch that does not continue the central's head. */
  syncGap: 409,
  /** Sync: a batch whose chain differs from the central's at the same seq. */
  syncDiverged: 409,
  /** Sync: a malformed batch, or one whose events do not hash to its header's lastHash. */
  invalidBatch: 400,
  payloadTooLarge: 413,
  /** Ordering: an Idempotency-Key already used by this user for another command (another path or body). */
  idempotencyKeyReused: 422,
  unsupportedMediaType: 415,
  /** Sync: a protocol or event schema this central does not speak. */
  unsupportedProtocol: 426,
  tooManyRequests: 429,
  internal: 500,
  unavailable: 503,
  /** The data directory's disk is below storage.minFreeBytes: writes wait (Retry-After), reads go on. */
  storageFull: 503,
} as const;

export type ErrorCode = keyof typeof STATUS;

export interface ErrorDetail {
  code: string;
  message: string;
  args: string[];
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly codes: ErrorDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /** A single-code error whose status comes from the catalog. */
  static of(code: ErrorCode, message: string, args: string[] = []): AppError {
    const headers: Record<string, string> =
      code === 'unauthorized' ? { 'WWW-Authenticate': 'Bearer error="invalid_token"' } : {};
    return new AppError(STATUS[code], message, [{ code, message, args }], headers);
  }
}

export const notFound = (what = 'resource'): AppError => AppError.of('notFound', `${what} not found`);
export const forbidden = (message: string): AppError => AppError.of('forbidden', message);
/** 403 for a token without the scope a call needs, with RFC 6750 3.1's challenge naming that scope. */
export const insufficientScope = (scope: string, message: string): AppError =>
  new AppError(403, message, [{ code: 'forbidden', message, args: [] }],
    { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` });
/** A 400 naming one field: a JSON pointer into the body, or the name of a query parameter. */
export const invalidField = (field: string, message: string): AppError =>
  new AppError(400, message, [{ code: 'invalidField', message, args: [field] }]);
export const unauthorized = (message = 'missing or invalid bearer token'): AppError =>
  AppError.of('unauthorized', message);

/** A business-rule failure of a queued command: becomes a NOTIFICATION, never an HTTP error. */
export class CommandRejected extends Error {
  constructor(readonly codes: ErrorDetail[]) {
    super(codes.map((c) => c.message).join('; '));
  }
}

export const reject = (code: string, message: string, args: string[] = []): CommandRejected =>
  new CommandRejected([{ code, message, args }]);

export interface ErrorBody {
  message: string;
  codes: ErrorDetail[];
}

export function errorBody(err: AppError): ErrorBody {
  return { message: err.message, codes: err.codes };
}
