import { readFileSync } from 'node:fs';
import { type Static, Type } from '@sinclair/typebox';
import { PUBLIC_KEY_PATTERN } from './shared/release-schemas.js';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type ParseError, parse, printParseErrorCode } from 'jsonc-parser';
import cron from 'node-cron';
import { DEFAULT_ORDER_BOUNDS } from './modules/ordering/bounds.js';
import { addressListProblems } from './shared/addresses.js';
import type { ForwardedHeader } from './http/client-address.js';
import { printerProblems } from './modules/printing/printers.js';
import { ProcessError } from './shared/errors.js';
import { floorProblem } from './db/wal-room.js';
import { Uuid } from './shared/types.js';

/**
 * An ESC/POS receipt printer of a venue (src/modules/printing; docs/printing.md "Printing"): on a serial line
 * (`path`) or on the network (`host`, `port`: raw TCP, docs/printing.md "Network printers"). Exactly one of
 * `path` and `host`: printerProblems refuses both and neither, naming the printer.
 */
const PrinterSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' }),
    venue: Uuid,
    role: Type.Union([Type.Literal('kitchen'), Type.Literal('counter')]),
    path: Type.Optional(Type.String({ minLength: 1 })),
    // A host name or an address, without a scheme or a port (those go in `port`).
    host: Type.Optional(Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9._:-]+$' })),
    // The printer's raw TCP port (JetDirect/AppSocket); only with `host`. Absent: 9100 (TCP_PRINTER_PORT).
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_535 })),
    baudRate: Type.Integer({ default: 19_200, minimum: 1200, maximum: 921_600 }),
    columns: Type.Integer({ default: 42, minimum: 24, maximum: 80 }),
    codePage: Type.String({ default: 'cp852', minLength: 1 }),
    categories: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    backup: Type.Optional(Type.String({ minLength: 1 })),
    statusQuery: Type.Boolean({ default: true }),
  },
  { additionalProperties: false },
);
export type PrinterConfig = Static<typeof PrinterSchema>;

/** A token bucket of failed sign-in attempts (src/shared/oauth/throttle.ts): `burst`, then one per `refillSeconds`. */
const attemptBucket = (burst: number, refillSeconds: number) =>
  Type.Object(
    {
      burst: Type.Integer({ default: burst, minimum: 1, maximum: 1_000_000 }),
      refillSeconds: Type.Number({ default: refillSeconds, exclusiveMinimum: 0, maximum: 86_400 }),
    },
    { default: {}, additionalProperties: false },
  );

const MIB = 1_048_576;

/** A budget of bytes stored (src/modules/ordering/write-budget.ts): `burstBytes` at once, then `bytesPerMinute`. */
const writeRate = (burstBytes: number, bytesPerMinute: number) =>
  Type.Object(
    {
      burstBytes: Type.Integer({ default: burstBytes, minimum: 65_536, maximum: 1024 * MIB }),
      bytesPerMinute: Type.Integer({ default: bytesPerMinute, minimum: 1024, maximum: 1024 * MIB }),
    },
    { default: {}, additionalProperties: false },
  );

/** The configuration file: JSON with comments. Every option has a default; see native-config/venue-box.jsonc. */
const ConfigSchema = Type.Object(
  {
    host: Type.String({ default: '0.0.0.0', minLength: 1 }),
    port: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
    dataDir: Type.String({ default: './data', minLength: 1 }),
    provisioningFile: Type.Optional(Type.String({ minLength: 1 })),
    logLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
      { default: 'info' },
    ),
    auth: Type.Object(
      {
        accessTokenTtlSeconds: Type.Integer({ default: 3600, minimum: 1, maximum: 86_400 }),
        refreshTokenTtlDays: Type.Number({ default: 30, exclusiveMinimum: 0, maximum: 365 }),
        // A retry of the same refresh within this many seconds gets the same new pair (docs/api.md "Token revocation").
        refreshRetryGraceSeconds: Type.Number({ default: 30, minimum: 0, maximum: 300 }),
        throttle: Type.Object(
          {
            accountAtAddress: attemptBucket(5, 10),
            account: attemptBucket(100, 2),
            address: attemptBucket(20, 1),
            maxConcurrentHashes: Type.Integer({ default: 2, minimum: 1, maximum: 64 }),
            maxQueuedHashes: Type.Integer({ default: 16, minimum: 0, maximum: 10_000 }),
          },
          { default: {}, additionalProperties: false },
        ),
        // Anonymous tokens cost nothing to ask for (src/modules/auth/anonymous.ts).
        anonymous: Type.Object(
          {
            perAddressPerMinute: Type.Integer({ default: 60, minimum: 1, maximum: 100_000 }),
            idleRefreshHours: Type.Number({ default: 24, minimum: 1, maximum: 24 * 365 }),
          },
          { default: {}, additionalProperties: false },
        ),
      },
      { default: {}, additionalProperties: false },
    ),
    events: Type.Object(
      { retentionHours: Type.Number({ default: 48, minimum: 24, maximum: 24 * 30 }) },
      { default: {}, additionalProperties: false },
    ),
    http: Type.Object(
      {
        maxBodyBytes: Type.Integer({ default: 1_048_576, minimum: 1024, maximum: 16_777_216 }),
        // Origins (scheme://host[:port], as browsers send Origin) whose pages may call the API (docs/api.md "Browsers on another origin (CORS)").
        corsOrigins: Type.Array(Type.String({ pattern: '^https?://[^/\\s]+$', maxLength: 255 }), {
          default: [],
          maxItems: 64,
        }),
        // Reverse proxies in front (addresses or CIDR ranges): from them, the client's address is read from
        // forwardedHeader; from anyone else that header is ignored (docs/api.md "Behind a reverse proxy (nginx)").
        trustedProxies: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { default: [], maxItems: 256 }),
        // The one header those proxies write (src/http/client-address.ts): the other is never read.
        forwardedHeader: Type.Union([Type.Literal('x-forwarded-for'), Type.Literal('forwarded')], {
          default: 'x-forwarded-for' satisfies ForwardedHeader,
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    // Limits of the live socket (src/ws/hub.ts; docs/api.md "The socket"), in bytes and sockets.
    sockets: Type.Object(
      {
        maxBufferedBytes: Type.Integer({ default: 16 * 1024 * 1024, minimum: 65_536, maximum: 1024 * 1024 * 1024 }),
        maxBackpressureBytes: Type.Integer({ default: 1024 * 1024, minimum: 16_384, maximum: 64 * 1024 * 1024 }),
        maxUnacknowledgedBytes: Type.Integer({ default: 256 * 1024, minimum: 65_536, maximum: 64 * 1024 * 1024 }),
        maxReplayBytes: Type.Integer({ default: 4 * 1024 * 1024, minimum: 1024, maximum: 256 * 1024 * 1024 }),
        maxFrameBytes: Type.Integer({ default: 512 * 1024, minimum: 1024, maximum: 16 * 1024 * 1024 }),
        maxPerUser: Type.Integer({ default: 16, minimum: 1, maximum: 100_000 }),
        maxPerToken: Type.Integer({ default: 8, minimum: 1, maximum: 100_000 }),
        idleTimeoutSeconds: Type.Integer({ default: 120, minimum: 8, maximum: 120 }),
      },
      { default: {}, additionalProperties: false },
    ),
    ordering: Type.Object(
      {
        // How long an order command's Idempotency-Key answers a retry with the first confirmation, in hours.
        idempotencyHours: Type.Number({ default: 24, minimum: 1, maximum: 168 }),
        // Size limits of orders (src/modules/ordering/bounds.ts).
        maxLines: Type.Integer({ default: DEFAULT_ORDER_BOUNDS.maxLines, minimum: 1, maximum: 10_000 }),
        maxOpenPerAnonymousUser: Type.Integer({
          default: DEFAULT_ORDER_BOUNDS.maxOpenPerAnonymousUser,
          minimum: 1,
          maximum: 10_000,
        }),
        // Order commands of one customer: `burst` at once, then one per `refillSeconds` (staff not limited).
        customerCommandRate: Type.Object(
          {
            burst: Type.Integer({ default: 40, minimum: 1, maximum: 1_000_000 }),
            refillSeconds: Type.Number({ default: 0.1, exclusiveMinimum: 0, maximum: 3600 }),
          },
          { default: {}, additionalProperties: false },
        ),
        // Bytes of orders customers' commands may store (src/modules/ordering/write-budget.ts; docs/orders.md
        // "Order limits"): per client address, and the venue's customers together. Staff not limited.
        addressWriteRate: writeRate(4 * MIB, MIB),
        venueWriteRate: writeRate(16 * MIB, 4 * MIB),
      },
      { default: {}, additionalProperties: false },
    ),
    warehouse: Type.Object(
      { lockTtlMinutes: Type.Number({ default: 30, exclusiveMinimum: 0, maximum: 7 * 24 * 60 }) },
      { default: {}, additionalProperties: false },
    ),
    sync: Type.Object(
      {
        flushDelayMs: Type.Integer({ default: 1000, minimum: 0, maximum: 60_000 }),
        retryMinMs: Type.Integer({ default: 1000, minimum: 100, maximum: 60_000 }),
        retryMaxMs: Type.Integer({ default: 300_000, minimum: 1000, maximum: 3_600_000 }),
        // How often a box that is not enrolled looks for its device file (docs/sync.md "Talking to the central").
        enrolPollSeconds: Type.Number({ default: 5, minimum: 0.1, maximum: 3600 }),
        heartbeatSeconds: Type.Number({ default: 60, minimum: 1, maximum: 3600 }),
        requestTimeoutSeconds: Type.Number({ default: 30, minimum: 1, maximum: 600 }),
        retentionDays: Type.Number({ default: 30, minimum: 1, maximum: 365 }),
        warnAfterHours: Type.Number({ default: 6, exclusiveMinimum: 0, maximum: 24 * 30 }),
        // The catalogue's long poll: how long the central may hold it open when nothing changed.
        catalogueWaitSeconds: Type.Integer({ default: 25, minimum: 1, maximum: 60 }),
        // Menu images from the central (docs/sync.md "Menu images"): at most this many bytes of them on the data disk.
        mediaMaxBytes: Type.Integer({ default: 268_435_456, minimum: 0 }),
      },
      { default: {}, additionalProperties: false },
    ),
    // Disk space and retention (src/modules/storage; docs/operations.md "Storage").
    storage: Type.Object(
      {
        minFreeBytes: Type.Integer({ default: 67_108_864, minimum: 0 }),
        warnFreeBytes: Type.Integer({ default: 268_435_456, minimum: 0 }),
        commandRetentionDays: Type.Number({ default: 7, minimum: 1, maximum: 365 }),
      },
      { default: {}, additionalProperties: false },
    ),
    // A standby box (src/modules/standby; docs/operations.md "A standby box").
    standby: Type.Object(
      {
        // How long a confirmation waits for the standby's acknowledgement before the primary goes on alone.
        stallMs: Type.Integer({ default: 1000, minimum: 10, maximum: 10_000 }),
        // A standby that went away is waited for (its frames kept in the WAL) until it is this far behind;
        // then it gets a new snapshot when it comes back.
        maxLagBytes: Type.Integer({ default: 67_108_864, minimum: 1_048_576 }),
        // How long the standby waits for its primary's word before it may take over (`standby promote`).
        primarySilentMs: Type.Integer({ default: 2000, minimum: 100, maximum: 60_000 }),
      },
      { default: {}, additionalProperties: false },
    ),
    // Updates of the program (src/modules/update; docs/operations.md "Updating boxes").
    update: Type.Object(
      {
        // Where releases live side by side: DIR/releases/<version>, DIR/current, DIR/previous, DIR/downloads.
        dir: Type.String({ default: '/opt/venue-box', minLength: 1 }),
        // The release keys this box trusts (Ed25519 public keys, base64, from `venue-box release keygen`).
        releaseKeys: Type.Array(Type.String({ pattern: PUBLIC_KEY_PATTERN }), { default: [], maxItems: 16 }),
        // The download's average rate at most (0: no limit): an update never crowds out the venue's own traffic.
        downloadBytesPerSecond: Type.Integer({ default: 4_194_304, minimum: 0 }),
        // Never install within this many minutes of an order command.
        quietMinutes: Type.Number({ default: 10, minimum: 0, maximum: 24 * 60 }),
        // How often a downloaded release waiting for its window looks again.
        checkSeconds: Type.Number({ default: 30, minimum: 0.1, maximum: 3600 }),
        // Free space the release directory's disk keeps after a download.
        minFreeBytes: Type.Integer({ default: 268_435_456, minimum: 0 }),
        // The health gate: ready within readySeconds, then answering /readyz for probationSeconds.
        readySeconds: Type.Number({ default: 300, minimum: 1, maximum: 3600 }),
        probationSeconds: Type.Number({ default: 30, minimum: 1, maximum: 3600 }),
        // Starts of a new release after the switch before the unit's guard puts the old one back.
        maxStarts: Type.Integer({ default: 3, minimum: 1, maximum: 100 }),
      },
      { default: {}, additionalProperties: false },
    ),
    // Backups of the database and the key files (src/modules/backup; docs/operations.md "Backups and restore").
    backup: Type.Object(
      {
        enabled: Type.Boolean({ default: true }),
        dir: Type.Optional(Type.String({ minLength: 1 })),
        schedule: Type.String({ default: '0 * * * *', minLength: 1 }),
        keepHourly: Type.Integer({ default: 48, minimum: 0, maximum: 100_000 }),
        keepDaily: Type.Integer({ default: 14, minimum: 0, maximum: 100_000 }),
      },
      { default: {}, additionalProperties: false },
    ),
    // GET /metrics (src/modules/health; docs/operations.md "Health: metrics, readiness and the watchdog").
    metrics: Type.Object(
      {
        enabled: Type.Boolean({ default: true }),
        // Addresses (or CIDR ranges) that may scrape without a token; everyone else needs a staff token.
        allowAddresses: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { default: [], maxItems: 256 }),
      },
      { default: {}, additionalProperties: false },
    ),
    // The box's own screens at / (web/; README "Screens"). Tenant, client and venue: the first provisioned ones
    // unless set here.
    screens: Type.Object(
      {
        enabled: Type.Boolean({ default: true }),
        language: Type.Union([Type.Literal('pl'), Type.Literal('en')], { default: 'pl' }),
        // The venues' prices are in this currency (ISO 4217): the screens show it beside every price.
        currency: Type.String({ default: 'PLN', pattern: '^[A-Z]{3}$' }),
        tenant: Type.Optional(Uuid),
        clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        clientSecret: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        venue: Type.Optional(Uuid),
      },
      { default: {}, additionalProperties: false },
    ),
    printers: Type.Array(PrinterSchema, { default: [], maxItems: 32 }),
    printing: Type.Object(
      {
        kitchenMaxAgeMinutes: Type.Number({ default: 30, exclusiveMinimum: 0, maximum: 24 * 60 }),
        backupAfterSeconds: Type.Number({ default: 120, minimum: 0, maximum: 86_400 }),
        retryMinMs: Type.Integer({ default: 1000, minimum: 10, maximum: 60_000 }),
        retryMaxMs: Type.Integer({ default: 15_000, minimum: 10, maximum: 600_000 }),
        statusTimeoutMs: Type.Integer({ default: 1000, minimum: 50, maximum: 30_000 }),
        statusPollSeconds: Type.Number({ default: 15, exclusiveMinimum: 0, maximum: 3600 }),
      },
      { default: {}, additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
const checker = TypeCompiler.Compile(ConfigSchema);

/** A configuration the box cannot run with: exit 78 (docs/operations.md "Exit codes"). */
export class ConfigError extends ProcessError {
  constructor(message: string) {
    super('config', message);
  }
}

/** Fills defaults into a partial config, then validates it. */
export function resolveConfig(partial: unknown): Config {
  const value = withDefaults(ConfigSchema, partial) as Config;
  const first = checker.Errors(value).First();
  if (first) throw new ConfigError(`${first.path || '/'}: ${first.message}`);
  if (!cron.validate(value.backup.schedule)) {
    throw new ConfigError(`/backup/schedule: not a cron expression: ${value.backup.schedule}`);
  }
  const problem =
    printerProblems(value.printers)[0] ??
    addressListProblems(value.metrics.allowAddresses)[0] ??
    addressListProblems(value.http.trustedProxies, '/http/trustedProxies')[0] ??
    floorProblem(value.storage.minFreeBytes);
  if (problem) throw new ConfigError(problem);
  return value;
}

export function loadConfigFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: true }) as unknown;
  if (errors.length > 0) {
    const e = errors[0]!;
    const line = text.slice(0, e.offset).split('\n').length;
    throw new ConfigError(`config file ${file} line ${line}: ${printParseErrorCode(e.error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`config file ${file} must hold one JSON object`);
  }
  return value;
}

/** Defaults from the schema, applied to nested objects and array items too; unknown keys are left for validation to refuse. */
function withDefaults(
  schema: { default?: unknown; properties?: Record<string, unknown>; items?: unknown },
  value: unknown,
): unknown {
  const base = value === undefined ? structuredClone(schema.default) : value;
  if (schema.items && Array.isArray(base)) return base.map((item) => withDefaults(schema.items as typeof schema, item));
  if (!schema.properties || typeof base !== 'object' || base === null || Array.isArray(base)) return base;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, sub] of Object.entries(schema.properties)) {
    const filled = withDefaults(sub as typeof schema, out[key]);
    if (filled !== undefined) out[key] = filled;
  }
  return out;
}
