import { withPool } from './cli-database.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import demo from '../../native-config/demo.json';
import type { Command, Program, Values as CommandValues } from '../command-line.js';
import { ProcessError, ProvisioningError, usageError } from '../shared/errors.js';
import { startCentral } from './central.js';
import { openCentralDatabase } from './db/open.js';
import { createCentralLogger } from './log.js';
import type { DeviceView } from './modules/devices/repo.js';
import { createDeviceService } from './modules/devices/service.js';
import { importCatalogue } from './modules/catalogue/import.js';
import { createCatalogueRepo } from './modules/catalogue/repo.js';
import { listReleases, uploadRelease } from './modules/releases/commands.js';
import { untilSignal } from '../shared/until-signal.js';
import { addressListProblems } from '../shared/addresses.js';
import { FORWARDED_HEADERS } from '../http/client-address.js';
import { DEAD_LETTERS_HELP, DEAD_LETTERS_USAGE, deadLettersList, deadLettersRetry } from './dead-letters-cli.js';

const USAGE = `Usage:
  venue-box central serve [--host H] [--port N] [--data-dir DIR] [--database-url URL | --database-port N] [--demo]
                          [--provisioning FILE]
                          [--refresh-retry-grace-seconds S] [--console-dir DIR] [--standby-lease-ms MS]
                          [--pool-size N] [--trusted-proxies ADDR,CIDR...]
                          [--forwarded-header x-forwarded-for|forwarded] [--accept-protocol-1]
  venue-box central enrol --tenant T --venue V [--ttl-hours H] [--data-dir DIR] [--database-url URL]
  venue-box central devices [--json] [--data-dir DIR] [--database-url URL]
  venue-box central revoke DEVICE [--data-dir DIR] [--database-url URL]
  venue-box central import FILE [--data-dir DIR] [--database-url URL]
  venue-box central purge-tombstones [--older-than-days D] [--data-dir DIR] [--database-url URL]
  venue-box central release upload FILE.release.json [--binary FILE] [--tenant T] [--data-dir DIR] [--database-url URL]
  venue-box central release list [--json] [--data-dir DIR] [--database-url URL]
${DEAD_LETTERS_USAGE}
Without --database-url the central runs PostgreSQL embedded in DIR/postgres (default DIR ./central-data);
enrol, devices and revoke use that cluster while the central runs, or start it for the command.
serve --database-port puts the embedded PostgreSQL on that port of 127.0.0.1 (default: a free one at each start).
release upload takes the binary beside its release file (the file's name without .release.json) unless --binary
names it, and the central's only tenant unless --tenant names one.
serve --console-dir serves the headquarters console from DIR instead of the one built with the program.
serve --standby-lease-ms sets how long a standby pair's lease lasts (default 5000; 100 to 600000).
serve --pool-size sets this process's database connections (default 10; 3 to 200), one more listens for changes.
serve --trusted-proxies names the balancers or proxies in front (addresses or CIDR ranges, comma-separated): a
request from one of them is from the client its X-Forwarded-For names, or its RFC 7239 Forwarded with
--forwarded-header forwarded (only the header named is read).
serve --accept-protocol-1 takes the unstamped signed requests of boxes of protocol 1, which can be replayed, while
a fleet is upgraded; leave it off once every box runs protocol 2 (docs/sync.md "Signed requests").
${DEAD_LETTERS_HELP}`;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  host: { type: 'string', default: '0.0.0.0' },
  port: { type: 'string', default: '8090' },
  'data-dir': { type: 'string', default: './central-data' },
  'database-url': { type: 'string' },
  'database-port': { type: 'string' },
  demo: { type: 'boolean' },
  provisioning: { type: 'string' },
  tenant: { type: 'string' },
  venue: { type: 'string' },
  'ttl-hours': { type: 'string', default: '24' },
  json: { type: 'boolean' },
  'older-than-days': { type: 'string', default: '30' },
  'refresh-retry-grace-seconds': { type: 'string', default: '30' },
  binary: { type: 'string' },
  'console-dir': { type: 'string' },
  'standby-lease-ms': { type: 'string' },
  'pool-size': { type: 'string' },
  'trusted-proxies': { type: 'string' },
  'forwarded-header': { type: 'string', default: 'x-forwarded-for' },
  'accept-protocol-1': { type: 'boolean' },
  device: { type: 'string' },
  all: { type: 'boolean' },
} as const;

type Options = typeof OPTIONS;
type Values = CommandValues<Options>;

const commands: Command<Options>[] = [
  { words: ['serve'], run: (values) => serveCentral(values) },
  { words: ['enrol'], run: (values) => enrol(values) },
  { words: ['devices'], run: (values) => devices(values) },
  { words: ['revoke'], args: 1, run: (values, [device]) => revoke(values, device!) },
  { words: ['import'], args: 1, run: (values, [file]) => importFile(values, file!) },
  { words: ['purge-tombstones'], run: (values) => purgeTombstones(values) },
  { words: ['release', 'upload'], args: 1, run: (values, [file]) => releaseUpload(values, file!) },
  { words: ['release', 'list'], run: (values) => releaseList(values) },
  { words: ['dead-letters', 'list'], run: (values) => deadLettersList(values) },
  { words: ['dead-letters', 'retry'], args: 'any', run: (values, ids) => deadLettersRetry(values, ids) },
];

/** `venue-box central ...`, run by the one front end (src/command-line.ts; exit codes: docs/operations.md "Exit codes"). */
export const CENTRAL: Program<Options> = { name: 'venue-box central', help: USAGE, options: OPTIONS, commands };

async function serveCentral(values: Values): Promise<number> {
  if (!/^\d{1,5}$/.test(values.port!) || Number(values.port) > 65535)
    throw usageError(`--port must be a port number, got ${values.port}`);
  const databasePort = values['database-port'] === undefined ? undefined : Number(values['database-port']);
  if (
    databasePort !== undefined &&
    !(/^\d{1,5}$/.test(values['database-port']!) && databasePort >= 1 && databasePort <= 65535)
  )
    throw usageError(`--database-port must be a port number from 1 to 65535, got ${values['database-port']}`);
  if (databasePort !== undefined && values['database-url'] !== undefined)
    throw usageError("--database-port is the embedded PostgreSQL's: it does not go with --database-url");
  const grace = Number(values['refresh-retry-grace-seconds']);
  if (!(grace >= 0 && grace <= 300))
    throw usageError(`--refresh-retry-grace-seconds must be 0 to 300, got ${values['refresh-retry-grace-seconds']}`);
  const leaseMs = values['standby-lease-ms'] === undefined ? undefined : Number(values['standby-lease-ms']);
  if (leaseMs !== undefined && !(Number.isInteger(leaseMs) && leaseMs >= 100 && leaseMs <= 600_000))
    throw usageError(`--standby-lease-ms must be 100 to 600000, got ${values['standby-lease-ms']}`);
  const poolSize = values['pool-size'] === undefined ? undefined : Number(values['pool-size']);
  if (poolSize !== undefined && !(Number.isInteger(poolSize) && poolSize >= 3 && poolSize <= 200))
    throw usageError(`--pool-size must be 3 to 200, got ${values['pool-size']}`);
  const trustedProxies = (values['trusted-proxies'] ?? '').split(',').filter((e) => e.trim() !== '');
  const badProxy = addressListProblems(trustedProxies, '--trusted-proxies')[0];
  if (badProxy) throw usageError(badProxy);
  const forwardedHeader = FORWARDED_HEADERS.find((h) => h === values['forwarded-header']);
  if (!forwardedHeader)
    throw usageError(`--forwarded-header must be ${FORWARDED_HEADERS.join(' or ')}, got ${values['forwarded-header']}`);
  const log = createCentralLogger(process.env.LOG_LEVEL ?? 'info');
  const provisioning: { name: string; document: unknown; demo?: boolean }[] = [];
  if (values.demo) provisioning.push({ name: 'demo', document: demo, demo: true });
  if (values.provisioning) provisioning.push({ name: values.provisioning, document: readJson(values.provisioning) });
  const central = await startCentral({
    host: values.host!,
    port: Number(values.port),
    dataDir: values['data-dir']!,
    databaseUrl: values['database-url'],
    databasePort,
    log,
    provisioning,
    refreshRetryGraceMs: grace * 1000,
    consoleDir: values['console-dir'] && resolve(values['console-dir']),
    standbyLeaseMs: leaseMs,
    poolSize,
    trustedProxies,
    forwardedHeader,
    acceptProtocol1: values['accept-protocol-1'] ?? false,
  });
  // A service that failed for good (src/shared/runtime.ts 'fatal'): stopped, and its error is the exit's (70 for a
  // bug, docs/operations.md "Exit codes") for the supervisor to start the central again.
  return Promise.race([
    untilSignal(central, log).then(() => 0),
    central.failed.then(async (failure) => {
      await central.stop().catch((err: unknown) => log.error({ err }, 'stopping failed'));
      throw failure.err;
    }),
  ]);
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(resolve(file), 'utf8')) as unknown;
  } catch (err) {
    throw new ProvisioningError(`provisioning file ${file}: ${(err as Error).message}`);
  }
}

/** A provisioning file into the catalogue; running boxes of its tenants receive the changes at once. */
async function importFile(values: Values, file: string): Promise<number> {
  const document = readJson(file);
  const results = await withPool(values, (pool) => importCatalogue(pool, file, document));
  for (const r of results)
    process.stdout.write(
      `tenant ${r.tenant}: ${r.changed ? `imported at rev ${r.rev}` : `unchanged (rev ${r.rev})`}\n`,
    );
  return 0;
}

async function purgeTombstones(values: Values): Promise<number> {
  const days = Number(values['older-than-days']);
  if (!(days >= 0 && days <= 36_500))
    throw usageError(`--older-than-days must be a number of days, got ${values['older-than-days']}`);
  const removed = await withPool(values, (pool) =>
    createCatalogueRepo(pool).purge(new Date(Date.now() - days * 86_400_000)),
  );
  process.stdout.write(`${removed} tombstone(s) removed\n`);
  return 0;
}

/** A signed release and its binary into the central (docs/sync.md "Releases and rollouts"), then its patches. */
async function releaseUpload(values: Values, file: string): Promise<number> {
  await withPool(values, (pool) =>
    uploadRelease(pool, { file, binary: values.binary, tenant: values.tenant }, (line) =>
      process.stdout.write(`${line}\n`),
    ),
  );
  return 0;
}

async function releaseList(values: Values): Promise<number> {
  process.stdout.write(await withPool(values, (pool) => listReleases(pool, values.json === true)));
  return 0;
}

/** Runs `fn` with the device service on the central's database, then closes it (stopping a cluster it started). */
async function withDevices<T>(
  values: Values,
  fn: (d: ReturnType<typeof createDeviceService>) => Promise<T>,
): Promise<T> {
  const db = await openCentralDatabase({
    dataDir: resolve(values['data-dir']!),
    databaseUrl: values['database-url'],
    mode: 'client',
    poolSize: 2,
  });
  try {
    return await fn(createDeviceService(db.pool, () => Date.now()));
  } finally {
    await db.close();
  }
}

async function enrol(values: Values): Promise<number> {
  if (!values.tenant || !values.venue) throw usageError('enrol needs --tenant and --venue');
  const ttl = Number(values['ttl-hours']);
  if (!(ttl > 0 && ttl <= 24 * 365))
    throw usageError(`--ttl-hours must be a positive number of hours, got ${values['ttl-hours']}`);
  const code = await withDevices(values, (d) => d.createCode(values.tenant!, values.venue!, ttl));
  // The code alone on the last line, for scripts: `venue-box central enrol ... | tail -1`.
  process.stdout.write(`one-time enrolment code for venue ${values.venue} (valid ${ttl} h):\n${code}\n`);
  return 0;
}

async function devices(values: Values): Promise<number> {
  const list = await withDevices(values, (d) => d.list());
  process.stdout.write(values.json ? `${JSON.stringify(list)}\n` : table(list));
  return 0;
}

function table(list: DeviceView[]): string {
  if (list.length === 0) return 'no devices enrolled\n';
  const rows = list.map((d) => [
    d.id,
    d.tenant,
    d.venue,
    d.status,
    d.keyId,
    `${d.head.epoch}/${d.head.seq}`,
    String(d.lagEvents),
    d.lastContactAt ?? '-',
    d.clockOffsetMs === null ? '-' : `${d.clockOffsetMs} ms`,
    d.version ?? '-',
    d.arch ?? '-',
    updateText(d),
  ]);
  const all = [
    [
      'DEVICE',
      'TENANT',
      'VENUE',
      'STATUS',
      'KEY',
      'EPOCH/SEQ',
      'LAG',
      'LAST CONTACT',
      'CLOCK OFFSET',
      'VERSION',
      'ARCH',
      'UPDATE',
    ],
    ...rows,
  ];
  const widths = all[0]!.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  return `${all
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** `downloading 1.2.0 40%`, `rolledBack 1.2.0 (crashLoop)`, `idle`; `-` before any report. */
function updateText(d: DeviceView): string {
  const u = d.update;
  if (!u) return '-';
  const progress =
    u.progress && u.progress.total > 0 ? ` ${Math.floor((u.progress.bytes / u.progress.total) * 100)}%` : '';
  return `${u.state}${u.target ? ` ${u.target}` : ''}${progress}${u.reason ? ` (${u.reason})` : ''}`;
}

async function revoke(values: Values, deviceId: string): Promise<number> {
  if (!(await withDevices(values, (d) => d.revoke(deviceId))))
    throw new ProcessError('refused', `no device ${deviceId}`);
  process.stdout.write(`device ${deviceId} revoked\n`);
  return 0;
}
