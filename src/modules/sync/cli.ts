import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pkg from '../../../package.json';
import { ConfigError, loadConfigFile, resolveConfig } from '../../config.js';
import { migrate } from '../../db/migrate.js';
import { DB_FILE, openDatabase } from '../../db/open.js';
import { nowMs } from '../../shared/clock.js';
import { CentralError, centralClient } from './client.js';
import { loadDevice, newKeyPair, saveDevice } from './enrolment/device.js';
import { createCatalogueRepo } from './catalogue/repo.js';
import { createSyncRepo } from './repo.js';
import { syncStatus } from './status.js';

const USAGE = `Usage:
  venue-box sync enrol --central URL --code CODE [--data-dir DIR] [--config FILE]
  venue-box sync status [--data-dir DIR] [--config FILE] [--json]
`;

/** `venue-box sync enrol|status`: returns the exit code (docs/sync.md "Sync to the central node"). */
export async function runSyncCli(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv, allowPositionals: true,
      options: {
        'data-dir': { type: 'string' }, config: { type: 'string' }, central: { type: 'string' }, code: { type: 'string' },
        json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    return usage((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  try {
    const dataDir = dataDirOf(values['data-dir'], values.config);
    if (positionals.length === 1 && positionals[0] === 'enrol') {
      if (!values.central || !values.code) return usage('enrol needs --central URL and --code CODE');
      return await enrol(dataDir, values.central, values.code);
    }
    if (positionals.length === 1 && positionals[0] === 'status') return status(dataDir, values.json === true);
    return usage(positionals.length ? `unknown command: sync ${positionals.join(' ')}` : 'no sync command given');
  } catch (err) {
    if (err instanceof ConfigError || err instanceof CentralError || err instanceof SyncCliError) {
      process.stderr.write(`venue-box sync: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

class SyncCliError extends Error {}

function usage(message: string): number {
  process.stderr.write(`venue-box sync: ${message}\n${USAGE}`);
  return 64;
}

function dataDirOf(dataDir: string | undefined, config: string | undefined): string {
  if (dataDir !== undefined) return resolve(dataDir);
  return resolve(resolveConfig(config ? loadConfigFile(config) : {}).dataDir);
}

/** Creates the device key pair (tweetnacl) and registers its public key with the one-time code. */
async function enrol(dataDir: string, central: string, code: string): Promise<number> {
  if (!existsSync(dataDir)) throw new SyncCliError(`no data directory at ${dataDir} (start the box once first)`);
  if (!/^https?:\/\/[^\s/]+/.test(central)) throw new SyncCliError(`--central must be an http(s) URL, got ${central}`);
  const existing = loadDevice(dataDir);
  if (existing) {
    throw new SyncCliError(`this box is enrolled already, as device ${existing.deviceId} at ${existing.central}`);
  }
  const pair = newKeyPair();
  const answer = await centralClient.enrol(central, {
    code: code.trim(), publicKey: Buffer.from(pair.publicKey).toString('base64'), name: `venue-box ${pkg.version}`,
  }, { requestTimeoutMs: 30_000 });
  const device = saveDevice(dataDir, central, answer, pair);
  if (/^http:\/\//i.test(central) && !/^http:\/\/(localhost|127\.|\[::1\])/i.test(central)) {
    process.stderr.write('venue-box sync: warning: the central is reached over plain http; orders and documents cross the '
      + 'network unencrypted (put the central behind TLS and enrol with https://)\n');
  }
  process.stdout.write(`enrolled as device ${device.deviceId} of tenant ${device.tenant}, venue ${device.venue}, at ${central}\n`
    + 'a running box starts sending within a few seconds\n');
  return 0;
}

function status(dataDir: string, asJson: boolean): number {
  const file = join(dataDir, DB_FILE);
  if (!existsSync(file)) throw new SyncCliError(`no database at ${file}`);
  const db = openDatabase(file);
  try {
    migrate(db);
    const s = syncStatus(createSyncRepo(db), dataDir, nowMs(), createCatalogueRepo(db));
    if (asJson) {
      process.stdout.write(`${JSON.stringify(s)}\n`);
      return 0;
    }
    const lines = [
      ['central', s.central ?? 'not enrolled (venue-box sync enrol)'], ['device', s.deviceId ?? '-'],
      ['backlog', `${s.backlog} event(s)`],
      ['oldest unsynced', s.oldestUnsyncedAgeS === null ? '-' : `${s.oldestUnsyncedAgeS} s ago`],
      ['last success', s.lastSuccessAt ?? 'never'], ['last error', s.lastError ? `${s.lastError} (${s.lastErrorAt})` : '-'],
      ['dead letters', String(s.deadLetters)], ['position', `epoch ${s.epoch}, acknowledged ${s.ackedSeq} of ${s.newestSeq}`],
      ['catalogue', s.catalogue && s.catalogue.rev > 0 ? `rev ${s.catalogue.rev}, applied ${s.catalogue.appliedAt}` : 'none from the central yet'],
      ['catalogue error', s.catalogue?.lastError ? `${s.catalogue.lastError} (${s.catalogue.lastErrorAt})` : '-'],
    ];
    process.stdout.write(lines.map(([k, v]) => `${k!.padEnd(16)} ${v}\n`).join(''));
    return 0;
  } finally {
    db.close();
  }
}
