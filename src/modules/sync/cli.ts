import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pkg from '../../../package.json';
import type { Program } from '../../command-line.js';
import { type Config, loadConfigFile, resolveConfig } from '../../config.js';
import { migrate } from '../../db/migrate.js';
import { DB_FILE, openDatabase } from '../../db/open.js';
import { nowMs } from '../../shared/clock.js';
import { ProcessError, usageError } from '../../shared/errors.js';
import { type LocalBox, localStandbyStatus } from '../standby/local-status.js';
import { summarizeStandby } from '../standby/status.js';
import { refuseWhileFollowing } from '../standby/state.js';
import { CentralError, centralClient } from './client.js';
import { type Device, loadDevice, newKeyPair, saveDevice } from './enrolment/device.js';
import { reenrolProofText } from '../../shared/reenrol-proof.js';
import { signDetached } from '../../shared/sync-protocol.js';
import { createCatalogueRepo } from './catalogue/repo.js';
import { createSyncRepo } from './repo.js';
import { syncStatus } from './status.js';

const USAGE = `Usage:
  venue-box sync enrol --central URL --code CODE [--again] [--data-dir DIR] [--config FILE]
  venue-box sync status [--data-dir DIR] [--config FILE] [--port N] [--json]
`;

const OPTIONS = {
  'data-dir': { type: 'string' },
  config: { type: 'string' },
  central: { type: 'string' },
  code: { type: 'string' },
  port: { type: 'string' },
  json: { type: 'boolean' },
  again: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `venue-box sync enrol|status`, run by the one front end (src/command-line.ts; docs/sync.md "Sync to the central node"). */
export const SYNC: Program<typeof OPTIONS> = {
  name: 'venue-box sync',
  help: USAGE,
  options: OPTIONS,
  commands: [
    {
      words: ['enrol'],
      run(values) {
        const { dataDir } = boxOf(values);
        if (!values.central || !values.code) throw usageError('enrol needs --central URL and --code CODE');
        return enrol(dataDir, values.central, values.code, values.again === true);
      },
    },
    { words: ['status'], run: (values) => status(boxOf(values), values.json === true) },
  ],
};

/** The data directory, and the port its running box answers on (for its standby status). */
function boxOf(values: { 'data-dir'?: string; config?: string; port?: string }): LocalBox {
  const config: Config = resolveConfig(values.config ? loadConfigFile(values.config) : {});
  if (values.port !== undefined && !/^\d{1,5}$/.test(values.port))
    throw usageError(`--port must be a number, got ${values.port}`);
  return {
    host: config.host,
    port: values.port === undefined ? config.port : Number(values.port),
    dataDir: resolve(values['data-dir'] ?? config.dataDir),
  };
}

/**
 * Creates the device key pair (tweetnacl) and registers its public key with the one-time code. `again`: the box
 * is enrolled already and signs the request with its current key, so the central carries its history to the new
 * device (docs/sync.md "Enrolling again").
 */
async function enrol(dataDir: string, central: string, code: string, again: boolean): Promise<number> {
  if (!existsSync(dataDir))
    throw new ProcessError('noInput', `no data directory at ${dataDir} (start the box once first)`);
  if (!/^https?:\/\/[^\s/]+/.test(central)) throw usageError(`--central must be an http(s) URL, got ${central}`);
  const existing = loadDevice(dataDir);
  if (existing && !again) {
    throw new ProcessError(
      'refused',
      `this box is enrolled already, as device ${existing.deviceId} at ${existing.central} ` +
        '(revoked, or a new key? enrol it again with --again: its history goes with it)',
    );
  }
  // Another central would not know the history, and would start at seq 1, which the box may have pruned.
  if (existing && sameCentral(existing.central) !== sameCentral(central)) {
    throw new ProcessError(
      'refused',
      `this box is enrolled at ${existing.central}; moving it to another central is not supported`,
    );
  }
  const pair = newKeyPair();
  const publicKey = Buffer.from(pair.publicKey).toString('base64');
  const answer = await centralClient
    .enrol(
      central,
      {
        code: code.trim(),
        publicKey,
        name: `venue-box ${pkg.version}`,
        ...(existing ? { previous: previousProof(existing, publicKey) } : {}),
      },
      { requestTimeoutMs: 30_000 },
    )
    .catch((err: unknown) => {
      // A refused code or an unreachable central: the command's answer is no (exit 1).
      throw err instanceof CentralError ? new ProcessError('refused', err.message) : err;
    });
  const device = saveDevice(dataDir, central, answer, pair);
  if (/^http:\/\//i.test(central) && !/^http:\/\/(localhost|127\.|\[::1\])/i.test(central)) {
    process.stderr.write(
      'venue-box sync: warning: the central is reached over plain http; orders and documents cross the ' +
        'network unencrypted (put the central behind TLS and enrol with https://)\n',
    );
  }
  process.stdout.write(
    `enrolled as device ${device.deviceId} of tenant ${device.tenant}, venue ${device.venue}, at ${central}\n` +
      (existing ? `following device ${existing.deviceId}: its history goes on as this device's\n` : '') +
      'a running box starts sending within a few seconds\n',
  );
  return 0;
}

/** A central URL as compared: scheme and host in lower case, no trailing slashes. */
const sameCentral = (url: string): string => url.trim().replace(/\/+$/, '').toLowerCase();

/** The device this box was, and its key's signature over the new key (src/shared/reenrol-proof.ts). */
function previousProof(device: Device, newPublicKey: string): { deviceId: string; signature: string } {
  const text = Buffer.from(reenrolProofText(device.tenant, device.deviceId, newPublicKey), 'utf8');
  return { deviceId: device.deviceId, signature: Buffer.from(signDetached(text, device.secretKey)).toString('base64') };
}

async function status(box: LocalBox, asJson: boolean): Promise<number> {
  const { dataDir } = box;
  const file = join(dataDir, DB_FILE);
  if (!existsSync(file)) throw new ProcessError('noInput', `no database at ${file}`);
  // Whether the orders are on one box or two (docs/operations.md "A standby box"): the running box's word, or
  // its state file's. Asked before the database is opened: nothing is held open while the box is asked.
  const standby = summarizeStandby(await localStandbyStatus(box));
  refuseWhileFollowing(dataDir, 'sync status');
  const db = openDatabase(file);
  try {
    migrate(db);
    const s = { ...syncStatus(createSyncRepo(db), dataDir, nowMs(), createCatalogueRepo(db)), standby };
    if (asJson) {
      process.stdout.write(`${JSON.stringify(s)}\n`);
      return 0;
    }
    const lines = [
      ['central', s.central ?? 'not enrolled (venue-box sync enrol)'],
      ['device', s.deviceId ?? '-'],
      ['backlog', `${s.backlog} event(s)`],
      ['oldest unsynced', s.oldestUnsyncedAgeS === null ? '-' : `${s.oldestUnsyncedAgeS} s ago`],
      ['last success', s.lastSuccessAt ?? 'never'],
      ['last error', s.lastError ? `${s.lastError} (${s.lastErrorAt})` : '-'],
      ['dead letters', String(s.deadLetters)],
      ['position', `epoch ${s.epoch}, acknowledged ${s.ackedSeq} of ${s.newestSeq}`],
      [
        'catalogue',
        s.catalogue && s.catalogue.rev > 0
          ? `rev ${s.catalogue.rev}, applied ${s.catalogue.appliedAt}`
          : 'none from the central yet',
      ],
      ['catalogue error', s.catalogue?.lastError ? `${s.catalogue.lastError} (${s.catalogue.lastErrorAt})` : '-'],
      ['standby', `${standby.role}, ${standby.state}`],
    ];
    process.stdout.write(lines.map(([k, v]) => `${k!.padEnd(16)} ${v}\n`).join(''));
    return 0;
  } finally {
    db.close();
  }
}
