/**
 * The one catalogue of error codes (docs/api.md "Errors", and "The order lifecycle" for the business codes). Every
 * code the box or the central ever answers is an entry here, with its HTTP status or its channel, what it
 * means and what its `args` hold; errors are built only through the functions of this file, with a typed code.
 * src/shared/errors.test.ts keeps those tables and this catalogue equal, and /openapi.json names them.
 */

export interface ErrorSpec {
  /** The HTTP status of an answer carrying this code. */
  status: number;
  /** When it is answered (the "when" of docs/api.md's tables). */
  message: string;
  /** What `args` holds, in order. */
  args: readonly string[];
}

/** HTTP answers of the API, `{message, codes: [{code, message, args}]}`, on the box and the central. */
export const HTTP_ERRORS = {
  invalidBody: {
    status: 400,
    message: 'malformed JSON, a required body missing, or an ambiguous Content-Length',
    args: [],
  },
  invalidField: {
    status: 400,
    message: 'a field of the body (JSON pointer) or a query parameter is invalid',
    args: ['JSON pointer or parameter'],
  },
  unauthorized: {
    status: 401,
    message: 'missing, malformed, forged, expired or revoked bearer token (or, at the central, device signature)',
    args: [],
  },
  forbidden: { status: 403, message: 'the token lacks the scope, or x-tenant/x-user differ from the token', args: [] },
  notFound: {
    status: 404,
    message: 'unknown path, or a resource not of this tenant or not visible to this user',
    args: [],
  },
  methodNotAllowed: {
    status: 405,
    message: 'a known path asked with a method it does not take (Allow lists those it takes)',
    args: ['method'],
  },
  conflict: {
    status: 409,
    message: 'a conflict with stored state (a document number reused with other content, a row still in use)',
    args: [],
  },
  insufficientStock: {
    status: 409,
    message: 'an issue of more than is available',
    args: ['item', 'available', 'requested'],
  },
  unitMismatch: {
    status: 409,
    message: 'an item named in another unit than the warehouse keeps it in',
    args: ['item', 'kept unit', 'sent unit'],
  },
  revisionChanged: {
    status: 412,
    message: "a headquarters catalogue change whose If-Match names another rev than the row's: nothing written",
    args: ['the row\'s current rev ("0": no such live row)'],
  },
  payloadTooLarge: { status: 413, message: 'body over http.maxBodyBytes', args: [] },
  unsupportedMediaType: {
    status: 415,
    message: 'body not application/json (or, for a sync batch, not application/x-ndjson)',
    args: [],
  },
  rangeNotSatisfiable: {
    status: 416,
    message: 'a release download without one `Range: bytes=A-B` of at most 8 MiB inside the file',
    args: ['the size in bytes'],
  },
  releaseMismatch: {
    status: 422,
    message: "a release upload whose bytes do not match its manifest's sha256 and size: the upload is discarded",
    args: ['sha256 or size'],
  },
  idempotencyKeyReused: {
    status: 422,
    message: 'an Idempotency-Key reused for another order command',
    args: ['Idempotency-Key'],
  },
  tooManyRequests: {
    status: 429,
    message: 'past a rate or socket limit; Retry-After',
    args: ['the limit (config option) where one applies'],
  },
  internal: { status: 500, message: 'a bug: logged with the request id, no details in the body', args: ['request id'] },
  unavailable: { status: 503, message: 'the box or central is shutting down, or not ready', args: [] },
  storageFull: { status: 503, message: 'the data disk is below storage.minFreeBytes; Retry-After', args: [] },
} as const satisfies Record<string, ErrorSpec>;

/**
 * The central's answers to a box's sync requests (docs/sync.md "The protocol"); the body of a 409 also carries
 * `expectedSeq` and `head`, so the box knows where to resume.
 */
export const SYNC_ERRORS = {
  /** firstSeq is past the head + 1, or the epoch went back: nothing applied, resume at expectedSeq. */
  syncGap: { status: 409, message: "a batch that does not continue the central's head", args: [] },
  /** prevHash (or an overlapping event's hash) differs from the central's chain at that seq. */
  syncDiverged: { status: 409, message: "a batch whose chain differs from the central's at the same seq", args: [] },
  /** The batch is malformed, or its chain does not reach lastHash. */
  invalidBatch: {
    status: 400,
    message: "a malformed batch, or one whose events do not hash to its header's lastHash",
    args: [],
  },
  /** A protocol or schema this central does not know; the box keeps its queue. */
  unsupportedProtocol: { status: 426, message: 'a protocol or event schema this central does not speak', args: [] },
  /**
   * A signed request whose timestamp is outside the window of the device's clock (docs/sync.md "Signed requests");
   * a hello's refusal names a one-time challenge to sign into the hello sent again.
   */
  requestStale: {
    status: 401,
    message: "a signed request outside the window of the device's clock",
    args: ['challenge'],
  },
  /** A signed request whose nonce the central has seen: a replay, refused. */
  requestReplayed: { status: 401, message: 'a signed request whose nonce was seen before', args: [] },
} as const satisfies Record<string, ErrorSpec>;

export interface CommandErrorSpec {
  /** When a queued command is refused with it. */
  message: string;
  args: readonly string[];
}

/**
 * Business codes of a queued order command: never an HTTP answer (the command was confirmed with 200), but a
 * NOTIFICATION frame carrying the command's correlationId (docs/orders.md "The order lifecycle", "Order commands").
 */
export const COMMAND_ERRORS = {
  orderNotFound: { message: 'the order does not exist for this user', args: ['order id'] },
  forbidden: {
    message: 'ready or complete from a non-staff token; cancel from a non-staff token once anything is ORDERED',
    args: ['command'],
  },
  orderClosed: { message: 'any command on a COMPLETED or CANCELLED order', args: ['order id'] },
  invalidTransition: {
    message: "a command the lifecycle table does not allow in the order's status",
    args: ['current status', 'command'],
  },
  emptyOrder: { message: 'submit with no NEW line', args: ['order id'] },
  minOrderValue: {
    message: "submit of a DELIVERY order below the venue's minOrderValue",
    args: ['venue', 'required', 'actual'],
  },
  venueClosed: {
    message: "the venue's channel for the order type is inactive or outside its hours",
    args: ['venue', 'channel'],
  },
  invalidLine: {
    message: "update or remove of a line that is not NEW, not in the order, or not in that venue's bucket",
    args: ['line id'],
  },
  invalidClaimCode: { message: "complete with a claim code that is not the order's", args: ['order id'] },
  productUnavailable: { message: 'a sold-out product', args: ['line id', 'product id'] },
  invalidProduct: {
    message: "a product that is not on the venue's menu for the order's channel",
    args: ['line id', 'product id'],
  },
  invalidVenue: { message: 'a venue that is unknown, inactive, or not a bucket of the order', args: ['venue'] },
  tooManyLines: { message: 'more than ordering.maxLines lines that are not CANCELLED', args: ['order id', 'limit'] },
  orderValueTooHigh: { message: 'lines worth more than 10,000,000.00', args: ['order id', 'limit'] },
  tooManyOpenOrders: {
    message: 'new from a customer with ordering.maxOpenPerAnonymousUser open orders',
    args: ['limit'],
  },
  invalidCommand: { message: 'a stored command of a kind this box does not know (a downgraded box)', args: ['kind'] },
  internal: { message: 'the command failed on a bug; logged with its correlation id', args: ['correlation id'] },
} as const satisfies Record<string, CommandErrorSpec>;

/**
 * RFC 6749 section 5.2 errors of the token endpoint, `{error, error_description}` (docs/api.md "Errors"). It keeps
 * this shape on the box and on the central, also when a full disk refuses it.
 */
export const OAUTH_ERRORS = {
  invalid_client: { status: 401, message: 'unknown client or wrong secret (WWW-Authenticate: Basic)', args: [] },
  invalid_request: {
    status: 400,
    message: 'a malformed request: a missing or repeated parameter, credentials sent twice',
    args: [],
  },
  invalid_grant: {
    status: 400,
    message: 'wrong username or password, or a spent, expired or foreign refresh token',
    args: [],
  },
  unsupported_grant_type: {
    status: 400,
    message: 'a grant type other than password, refresh_token (and client_credentials where allowed)',
    args: [],
  },
  invalid_scope: { status: 400, message: 'a scope the user may not have', args: [] },
  /**
   * Too many failed sign-ins, or too many password checks at once (429), or a full disk (503), with
   * Retry-After. RFC 6749 has no 429 code; this is its only code meaning "try again later" (4.1.2.1: the server
   * is temporarily unable to handle the request). invalid_request would tell the client its request is
   * malformed, invalid_grant that the password is wrong even when it is right, and slow_down belongs to RFC
   * 8628's device polling.
   */
  temporarily_unavailable: {
    status: 429,
    message:
      'sign-ins throttled, too many anonymous users from one address (429), or the data disk full (503); Retry-After',
    args: [],
  },
} as const satisfies Record<string, ErrorSpec>;

export type HttpErrorCode = keyof typeof HTTP_ERRORS;
export type SyncErrorCode = keyof typeof SYNC_ERRORS;
/** Every code an HTTP answer of the API may carry. */
export type ErrorCode = HttpErrorCode | SyncErrorCode;
export type CommandErrorCode = keyof typeof COMMAND_ERRORS;
export type OAuthErrorCode = keyof typeof OAUTH_ERRORS;

/** The status of each HTTP code. */
export const STATUS: { readonly [C in ErrorCode]: number } = Object.fromEntries(
  Object.entries({ ...HTTP_ERRORS, ...SYNC_ERRORS }).map(([code, spec]) => [code, spec.status]),
) as { readonly [C in ErrorCode]: number };

/** One code of an error body or a NOTIFICATION. */
export interface ErrorDetail<C extends string = ErrorCode | CommandErrorCode> {
  code: C;
  message: string;
  args: string[];
}

/** A code of an HTTP answer, for errors that report several (every bad field, every short item). */
export const problem = (code: ErrorCode, message: string, args: string[] = []): ErrorDetail<ErrorCode> => ({
  code,
  message,
  args,
});

/** Whether a list of problems has one at least (and may then be thrown with AppError.ofAll). */
export const isNonEmpty = <T>(list: T[]): list is [T, ...T[]] => list.length > 0;

/** A code of a refused command, for rejections that report several (every unknown product). */
export const commandProblem = (
  code: CommandErrorCode,
  message: string,
  args: string[] = [],
): ErrorDetail<CommandErrorCode> => ({ code, message, args });

export class AppError extends Error {
  protected constructor(
    readonly status: number,
    message: string,
    readonly codes: ErrorDetail<ErrorCode>[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /** A single-code error whose status comes from the catalogue. */
  static of(code: ErrorCode, message: string, args: string[] = [], headers?: Record<string, string>): AppError {
    const challenge: Record<string, string> =
      code === 'unauthorized' ? { 'WWW-Authenticate': 'Bearer error="invalid_token"' } : {};
    return new AppError(STATUS[code], message, [problem(code, message, args)], { ...challenge, ...headers });
  }

  /** An error naming several problems (all of one status: the first one's). */
  static ofAll(message: string, codes: [ErrorDetail<ErrorCode>, ...ErrorDetail<ErrorCode>[]]): AppError {
    return new AppError(STATUS[codes[0].code], message, codes);
  }

  /** The same error with more response headers (Retry-After, Allow). */
  withHeaders(headers: Record<string, string>): AppError {
    return new AppError(this.status, this.message, this.codes, { ...this.headers, ...headers });
  }
}

/** An error with Retry-After in whole seconds (at least 1). */
export const retryLater = (code: ErrorCode, message: string, waitMs: number, args: string[] = []): AppError =>
  AppError.of(code, message, args, { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) });

export const notFound = (what = 'resource'): AppError => AppError.of('notFound', `${what} not found`);
export const forbidden = (message: string): AppError => AppError.of('forbidden', message);
/** 403 for a token without the scope a call needs, with RFC 6750 3.1's challenge naming that scope. */
export const insufficientScope = (scope: string, message: string): AppError =>
  AppError.of('forbidden', message, [], { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` });
/** A 400 naming one field: a JSON pointer into the body, or the name of a query parameter. */
export const invalidField = (field: string, message: string): AppError => AppError.of('invalidField', message, [field]);
export const unauthorized = (message = 'missing or invalid bearer token'): AppError =>
  AppError.of('unauthorized', message);

/** A business-rule failure of a queued command: becomes a NOTIFICATION, never an HTTP error. */
export class CommandRejected extends Error {
  constructor(readonly codes: ErrorDetail<CommandErrorCode>[]) {
    super(codes.map((c) => c.message).join('; '));
  }
}

export const reject = (code: CommandErrorCode, message: string, args: string[] = []): CommandRejected =>
  new CommandRejected([commandProblem(code, message, args)]);

export interface ErrorBody {
  message: string;
  codes: ErrorDetail<ErrorCode>[];
}

export function errorBody(err: AppError): ErrorBody {
  return { message: err.message, codes: err.codes };
}

export interface ExitSpec {
  /** The process's exit status: sysexits.h's code where one fits, 1 for a command whose answer is no. */
  code: number;
  /** When a command exits with it (the table of docs/operations.md "Exit codes"). */
  message: string;
}

/**
 * Exit codes of the command line (docs/operations.md "Exit codes"). An operator's error (a usage error, a bad
 * configuration, a database or file the program cannot use, a resource that is not there) is a ProcessError with
 * one of these reasons: one line on stderr, no stack trace. Anything else is a bug: exit 70 with its stack.
 * The systemd unit does not restart a box that exits 64, 65 or 78 (RestartPreventExitStatus=): those do not heal
 * by waiting.
 */
export const EXIT_CODES = {
  refused: {
    code: 1,
    message:
      'the command ran and its answer is no: stock check found differences, a printer test failed, the central refused an enrolment, no such device',
  },
  usage: { code: 64, message: 'a usage error: an unknown command or option, a missing or malformed argument' },
  data: {
    code: 65,
    message:
      'data this program cannot use: a database newer than the program, a file that is not a backup, an invalid provisioning file',
  },
  noInput: { code: 66, message: 'an input file or database that does not exist' },
  unavailable: {
    code: 69,
    message:
      "a service is not available: the port is in use, the embedded PostgreSQL did not start, the central's database is not reachable",
  },
  software: { code: 70, message: 'a bug: the message and its stack trace on stderr' },
  cantCreate: { code: 73, message: 'the data directory (or a file in it) cannot be created or written' },
  io: { code: 74, message: 'an input or output error: a backup that could not be written or read' },
  tempFail: { code: 75, message: 'another process holds the data directory; retry once it stopped' },
  config: {
    code: 78,
    message:
      "the configuration is wrong: a config file, a cache directory, a native addon of the machine, the central's database URL or its user's rights",
  },
} as const satisfies Record<string, ExitSpec>;

export type ExitReason = keyof typeof EXIT_CODES;

/** An operator's error at start-up or in a command: exits with its reason's code after one line on stderr. */
export class ProcessError extends Error {
  constructor(
    readonly reason: ExitReason,
    message: string,
  ) {
    super(message);
  }

  get exitCode(): number {
    return EXIT_CODES[this.reason].code;
  }
}

/** A usage error (64): the front end adds where to find the usage. */
export const usageError = (message: string): ProcessError => new ProcessError('usage', message);

/** A provisioning file (native-config/demo.json's shape) that is invalid, on the box or the central: exit 65. */
export class ProvisioningError extends ProcessError {
  constructor(message: string) {
    super('data', message);
  }
}
