// First: src/shared/one-core.ts notes node's and V8's own threads before anything can start libuv's thread pool.
import { tuneForOneCore } from './shared/one-core.js';
import { existsSync, fstatSync } from 'node:fs';
import { join, resolve } from 'node:path';
import demo from '../native-config/demo.json';
import pkg from '../package.json';
import { startBox } from './box.js';
import { dispatch, exitWith, type Program, parseCommandLine, runProgram, type Values } from './command-line.js';
import { type Config, ConfigError, loadConfigFile, resolveConfig } from './config.js';
import { MIGRATIONS, migrate } from './db/migrate.js';
import { STANDBY } from './modules/standby/cli.js';
import { serveAsStandby } from './modules/standby/standby-box.js';
import { loadStandbyState, refuseWhileFollowing } from './modules/standby/state.js';
import { DB_FILE, openDatabase } from './db/open.js';
import { createLogger } from './log.js';
import { createSystemdNotifier } from './modules/health/watchdog.js';
import { listPrinters, printTestPage } from './modules/printing/cli.js';
import { runStockCommand, type StockAction } from './modules/warehouse/ledger-check.js';
import { SYNC } from './modules/sync/cli.js';
import { UPDATE } from './modules/update/cli.js';
import { recoverInterruptedInstall } from './modules/update/recover.js';
import { installAfterStop, TRIAL_ENV } from './modules/update/trial.js';
import { thisProgram } from './modules/update/program.js';
import { ProcessError, usageError } from './shared/errors.js';
import { untilSignal } from './shared/until-signal.js';
import { backupList, backupNow, backupVerify, restore } from './modules/backup/cli.js';

const HELP = `venue-box ${pkg.version}: the ordering and warehouse box of a restaurant

Usage:
  venue-box serve [--host H] [--port N] [--data-dir DIR] [--config FILE] [--demo]
  venue-box stock check [--data-dir DIR] [--config FILE]
  venue-box stock rebuild [--data-dir DIR] [--config FILE]
  venue-box printers list [--config FILE]
  venue-box printers test NAME [--config FILE]
  venue-box sync enrol --central URL --code CODE [--data-dir DIR] [--config FILE]
  venue-box sync status [--data-dir DIR] [--config FILE] [--port N] [--json]
  venue-box backup now [--data-dir DIR] [--config FILE]
  venue-box backup list [--data-dir DIR] [--config FILE]
  venue-box backup verify FILE
  venue-box restore FILE --data-dir DIR
  venue-box update status [--data-dir DIR] [--config FILE] [--json]
  venue-box update apply FILE.release.json [--binary FILE] [--data-dir DIR] [--config FILE]
  venue-box update init [--config FILE]
  venue-box update guard [--data-dir DIR] [--config FILE]
  venue-box standby code [--data-dir DIR] [--config FILE]
  venue-box standby join PRIMARY_URL --code CODE --self URL [--data-dir DIR] [--config FILE]
  venue-box standby status|promote|check [--config FILE] [--json]
  venue-box central serve [--host H] [--port N] [--data-dir DIR] [--database-url URL] [--demo]
                          [--provisioning FILE] [--refresh-retry-grace-seconds S]
  venue-box central enrol --tenant T --venue V [--ttl-hours H] [--data-dir DIR] [--database-url URL]
  venue-box central devices [--data-dir DIR] [--database-url URL] [--json]
  venue-box central revoke DEVICE [--data-dir DIR] [--database-url URL]
  venue-box central import FILE [--data-dir DIR] [--database-url URL]
  venue-box central purge-tombstones [--older-than-days D] [--data-dir DIR] [--database-url URL]
  venue-box release keygen --out FILE
  venue-box release rotate --key OLD --out NEW
  venue-box release sign BINARY --key KEY [--notes TEXT] [--rollback] [--out FILE]
  venue-box release verify FILE --public-key B64 [--binary BINARY]
  venue-box release info
  venue-box --help
  venue-box --version

serve options:
  --host H          address to listen on (default 0.0.0.0)
  --port N          port to listen on (default 8080; 0 takes a free port)
  --data-dir DIR    where the database and signing key live (default ./data)
  --config FILE     configuration file (JSON with comments; see native-config/venue-box.jsonc)
  --demo            provision the built-in demo tenant (applied again at a start when it changed)

stock commands:
  check             recompute stock balances from the ledger and report every difference
                    from the cached balances (exit 1 if any)
  rebuild           rewrite the cached balances that differ from the ledger

printers commands:
  list              serial ports of this machine, and the configured printers with their paths
                    (present or MISSING) or network addresses (answering or not)
  test NAME         print a test page (Polish letters in the printer's code page) on the
                    configured printer NAME; exit 1 with the cause when it cannot

sync commands (the box's half of sync to a central node):
  enrol             create this box's device key and register it at the central with a
                    one-time code from 'venue-box central enrol' (the box may be running)
  status            central, device, backlog, oldest unsynced event, last success and error

backup commands (docs/operations.md "Backups and restore"):
  now               take a backup (the box may be running): the database, the token signing key
                    and the sync device identity in one verified file in backup.dir (default
                    DIR/backups); prints its path on the last line; then the retention rule
  list              the backups in backup.dir, newest first, and which rule keeps each
  verify FILE       check that FILE is a whole venue-box backup, as restore does

restore FILE        put a backup into the data directory --data-dir DIR (created when missing):
                    refused while a box runs on DIR; what DIR held is moved to DIR/replaced-<time>;
                    exit 65 when FILE is not a usable venue-box backup

update commands (docs/operations.md "Updating boxes"):
  status            the program, the releases installed side by side, and the last update's state
  apply FILE        a release from a USB stick (its .release.json, the binary beside it): checked
                    with the box's release keys, then installed by the running box once no order
                    is open, with the same health gate and way back as an update from the central
  init              put this binary into update.dir as its first release (current names it)
  guard             the systemd unit's ExecStartPre: puts the previous release back when a new
                    one does not come up after the switch

standby commands (a second box that takes over when this one dies, docs/operations.md "A standby box";
'venue-box standby --help' for more):
  code, join        pair two boxes: a one-time code on the primary, typed on the standby
  status            role, term, peer, replication state and lag
  promote, check    keepalived's notify_master and track script

central commands (the central node: 'venue-box central --help' for more):
  serve             the central's API for boxes and headquarters, on PostgreSQL (an embedded
                    one in the data directory unless --database-url is given)
  enrol             print a one-time enrolment code for a venue's box
  devices, revoke   list enrolled boxes; revoke one
  import FILE       a provisioning file (native-config/demo.json's shape) into the catalogue
                    that flows down to every box of its tenants
  purge-tombstones  remove retired catalogue rows older than D days (default 30)

release commands (headquarters' offline signing of the box's program, docs/operations.md "Updating boxes";
'venue-box release --help' for more):
  keygen, rotate    a new release key; the next key, vouched for by the one before
  sign BINARY       BINARY.release.json, the signed manifest of a venue-box binary (x64, or arm64 under qemu)
  verify FILE       check a release file's signature (and a binary) as a box would; exit 1 when refused
  info              this binary's version, architecture, Node and box schema as JSON

Logs are JSON lines on stdout. SIGTERM or SIGINT stops the box cleanly.
Exit codes (docs/operations.md "Exit codes"): 0 done, 1 the command's answer is no, 64 usage,
65 data it cannot use (a database newer than this program), 66 no input, 69 unavailable (port in use),
70 a bug, 73 data directory not writable, 74 I/O, 75 data directory held by another process, 78 config.
`;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  host: { type: 'string' },
  port: { type: 'string' },
  'data-dir': { type: 'string' },
  config: { type: 'string' },
  demo: { type: 'boolean' },
} as const;

type CliValues = Values<typeof OPTIONS>;

const BOX: Program<typeof OPTIONS> = {
  name: 'venue-box',
  help: HELP,
  options: OPTIONS,
  commands: [
    { words: ['serve'], run: (values) => serveVenueBox(values) },
    { words: ['stock', 'check'], run: (values) => stock('check', values) },
    { words: ['stock', 'rebuild'], run: (values) => stock('rebuild', values) },
    { words: ['printers', 'list'], run: (values) => printers(values) },
    { words: ['printers', 'test'], args: 1, run: (values, [name]) => printers(values, name) },
    { words: ['backup', 'now'], run: (values) => backupNow(configOf(values), out) },
    { words: ['backup', 'list'], run: (values) => backupList(configOf(values), out) },
    { words: ['backup', 'verify'], args: 1, run: (_values, [file]) => backupVerify(file!, out) },
    {
      words: ['restore'],
      args: 1,
      run(values, [file]) {
        if (values['data-dir'] === undefined)
          throw usageError('restore needs --data-dir DIR (the data directory to restore into)');
        return restore(file!, values['data-dir'], out);
      },
    },
  ],
};

async function main(argv: string[]): Promise<number> {
  // The central node and the box's sync commands are programs of their own (docs/sync.md "Sync to the central
  // node"), run by the same front end (src/command-line.ts). The central's code (PostgreSQL's driver with it) is
  // loaded by its commands only: a box never runs it, and loading it at every start cost the box 5 MB of memory
  // and 20 ms (docs/performance.md "Idle memory").
  if (argv[0] === 'central') {
    const { CENTRAL } = await import('./central/cli.js');
    return runProgram(CENTRAL.name, () => dispatch(CENTRAL, argv.slice(1)));
  }
  if (argv[0] === 'sync') return runProgram(SYNC.name, () => dispatch(SYNC, argv.slice(1)));
  if (argv[0] === 'update') return runProgram(UPDATE.name, () => dispatch(UPDATE, argv.slice(1)));
  if (argv[0] === 'standby') return runProgram(STANDBY.name, () => dispatch(STANDBY, argv.slice(1)));
  // Headquarters' release signing (docs/operations.md "Updating boxes"): loaded by its commands only, as the central's.
  if (argv[0] === 'release') {
    const { RELEASE } = await import('./modules/update/release-cli.js');
    return runProgram(RELEASE.name, () => dispatch(RELEASE, argv.slice(1)));
  }
  return runProgram(BOX.name, async () => {
    const { values } = parseCommandLine(OPTIONS, argv);
    if (values.version && !values.help) return print(`${pkg.version} (Node ${process.versions.node})\n`);
    return dispatch(BOX, argv);
  });
}

function inConfigFile<T>(file: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(`config file ${file}: ${err.message}`);
    throw err;
  }
}

function configOf(values: CliValues): Config {
  const file = values.config ? loadConfigFile(values.config) : {};
  // The file is checked on its own first, so that its errors name it (command-line values are checked below).
  if (values.config) inConfigFile(values.config, () => resolveConfig(file));
  const overrides: Record<string, unknown> = { ...(file as Record<string, unknown>) };
  if (values.host !== undefined) overrides.host = values.host;
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port)) throw usageError(`--port must be a number, got ${values.port}`);
    overrides.port = Number(values.port);
  }
  if (values['data-dir'] !== undefined) overrides.dataDir = values['data-dir'];
  return resolveConfig(overrides);
}

async function serveVenueBox(values: CliValues): Promise<number> {
  const config = configOf(values);
  const log = createLogger(config.logLevel);
  tuneForOneCore(log);
  const provisioning: { name: string; document: unknown }[] = [];
  if (values.demo) provisioning.push({ name: 'demo', document: demo });
  if (config.provisioningFile) {
    provisioning.push({ name: config.provisioningFile, document: loadConfigFile(config.provisioningFile) });
  }
  // A release under its health gate (docs/operations.md "Updating boxes") serves on loopback for the old one.
  const trial = process.env[TRIAL_ENV] === '1';
  // An install cut short by a power cut: the data is put back for this release before anything opens it.
  if (!trial) recoverInterruptedInstall(resolve(config.dataDir), pkg.version, log, Date.now());
  // systemd's Type=notify and WatchdogSec (native-config/venue-box.service); nothing without NOTIFY_SOCKET.
  const systemd = createSystemdNotifier({ env: process.env, pid: process.pid, log });
  // A standby box follows its primary until it takes over, then serves as the primary on the copy it holds
  // (docs/operations.md "A standby box").
  let tookOver = false;
  if (!trial && loadStandbyState(resolve(config.dataDir)).role === 'standby') {
    const stopSignal = new Promise<void>((r) => {
      process.once('SIGTERM', () => r());
      process.once('SIGINT', () => r());
    });
    const release = { version: pkg.version, schema: MIGRATIONS.at(-1)!.version };
    const outcome = await serveAsStandby({ config, log, release, stopSignal });
    if (outcome === 'stopped') return 0;
    tookOver = true;
  }
  const box = await startBox({ config, log, provisioning, configFile: values.config, systemd, trial, tookOver });
  if (trial) {
    // The release that watches this one holds our stdin (a pipe): when it is gone (killed), this trial stops too.
    if (fstatSync(0).isFIFO()) process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM')).resume();
    const failure = box.selfCheck();
    if (failure) {
      await box.stop();
      throw new ProcessError('data', `self-check failed: ${failure}`);
    }
  }
  // A service that failed for good (src/shared/runtime.ts 'fatal'): the box stops, and the failure's error is the
  // exit's (70 for a bug, docs/operations.md "Exit codes"), for systemd to start it again
  // (docs/architecture.md "Wiring and lifecycle").
  return Promise.race([
    untilSignal(box, log).then(() => 0),
    box.failed.then(async (failure) => {
      await box.stop().catch((err: unknown) => log.error({ err }, 'stopping failed'));
      throw failure.err;
    }),
    // An update to install: the box stops serving, this process watches the new release through its health
    // gate, then exits for systemd to start `current` (the new release, or this one again after a rollback).
    box.installRequested.then(async (plan) => {
      systemd.holdForInstall(`installing ${plan.to}`);
      await box.stop();
      await installAfterStop({
        config,
        dir: config.update.dir,
        plan,
        log,
        now: Date.now,
        gate: { readySeconds: config.update.readySeconds, probationSeconds: config.update.probationSeconds },
        program: thisProgram(),
        serveArgs: serveArgsOf(values),
      });
      return 0;
    }),
  ]);
}

/** `serve`'s options for the release under trial: the same configuration, data directory and provisioning. */
function serveArgsOf(values: CliValues): string[] {
  return [
    'serve',
    ...(values.config ? ['--config', resolve(values.config)] : []),
    ...(values['data-dir'] ? ['--data-dir', resolve(values['data-dir'])] : []),
    ...(values.demo ? ['--demo'] : []),
  ];
}

/** `stock check` / `stock rebuild` on the data directory's database (safe beside a running box: WAL). */
function stock(action: StockAction, values: CliValues): number {
  const file = join(resolve(configOf(values).dataDir), DB_FILE);
  if (!existsSync(file)) throw new ProcessError('noInput', `no database at ${file}`);
  refuseWhileFollowing(resolve(configOf(values).dataDir), `stock ${action}`);
  const db = openDatabase(file);
  try {
    migrate(db);
    const { output, exitCode } = runStockCommand(db, action);
    process.stdout.write(output);
    return exitCode;
  } finally {
    db.close();
  }
}

/** `printers list` / `printers test NAME`, with the printers of the configuration (docs/printing.md "Printing"). */
function printers(values: CliValues, testName?: string): Promise<number> {
  const config = configOf(values);
  const io = { out: (t: string) => process.stdout.write(t), err: (t: string) => process.stderr.write(t) };
  return testName === undefined
    ? listPrinters(config.printers, io)
    : printTestPage(config.printers, testName, config.printing.statusTimeoutMs, io);
}

const out = (text: string) => process.stdout.write(text);

function print(text: string): number {
  process.stdout.write(text);
  return 0;
}

exitWith('venue-box', main(process.argv.slice(2)));
