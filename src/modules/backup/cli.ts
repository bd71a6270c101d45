import { refuseWhileFollowing } from '../standby/state.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../../config.js';
import { type BackupTarget, BackupError, listBackups, takeBackup } from './take.js';
import { restoreBackup } from './restore.js';
import { readBackup } from './verify.js';

/** Where the backups of `config` go, and what is kept (docs/operations.md "Backups and restore"). */
export function backupTarget(config: Config): BackupTarget {
  const dataDir = resolve(config.dataDir);
  return {
    dataDir,
    dir: config.backup.dir ? resolve(config.backup.dir) : join(dataDir, 'backups'),
    createDir: config.backup.dir === undefined,
    keep: { keepHourly: config.backup.keepHourly, keepDaily: config.backup.keepDaily },
    reserveBytes: config.storage.warnFreeBytes,
  };
}

type Out = (text: string) => void;

/** `venue-box backup now`: the backup file's path on the last line. */
export async function backupNow(config: Config, out: Out): Promise<number> {
  refuseWhileFollowing(resolve(config.dataDir), 'backup now');
  const result = await takeBackup(backupTarget(config));
  out(
    `backup of ${join(resolve(config.dataDir), 'venue-box.db')}: ${mib(result.bytes)}, integrity ok, ${(result.ms / 1000).toFixed(1)} s\n`,
  );
  for (const name of result.removed) out(`removed by retention: ${name}\n`);
  out(`${result.file}\n`);
  return 0;
}

/** `venue-box backup list`: newest first, with the rules that keep each (none: the next backup removes it). */
export function backupList(config: Config, out: Out): number {
  const target = backupTarget(config);
  let backups: ReturnType<typeof listBackups>;
  try {
    backups = listBackups(target.dir, target.keep);
  } catch (err) {
    throw new BackupError(
      `cannot list backup directory ${target.dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  if (backups.length === 0) {
    out(`no backups in ${target.dir}\n`);
    return 0;
  }
  out(
    `backups in ${target.dir} (kept: the newest, ${target.keep.keepHourly} hourly, ${target.keep.keepDaily} daily; UTC)\n`,
  );
  for (const b of backups) {
    const taken = new Date(b.takenMs).toISOString().replace('T', ' ').slice(0, 19);
    out(
      `${b.name}  ${taken}  ${mib(b.bytes).padStart(10)}  ${b.keptBy.length ? b.keptBy.join(', ') : 'removed at the next backup'}\n`,
    );
  }
  out(`${backups.length} backup(s), ${mib(backups.reduce((n, b) => n + b.bytes, 0))}\n`);
  return 0;
}

/** `venue-box backup verify FILE`: what `restore` checks, without restoring. */
export function backupVerify(file: string, out: Out): number {
  const info = readBackup(resolve(file));
  out(`${info.file}: a venue-box backup, integrity ok\n`);
  out(
    `taken ${info.takenAt} on ${info.host} from ${info.dataDir} by venue-box ${info.version} (database schema ${info.schemaVersion})\n`,
  );
  out(`carries ${['venue-box.db', ...info.files.keys()].join(', ')}; ${mib(info.bytes)}\n`);
  return 0;
}

/** `venue-box restore FILE --data-dir DIR`. */
export function restore(file: string, dataDir: string, out: Out): number {
  const r = restoreBackup(file, dataDir);
  out(`checked ${r.backup.file}: taken ${r.backup.takenAt} by venue-box ${r.backup.version}, integrity ok\n`);
  if (r.replacedDir) out(`the data it replaces was moved to ${r.replacedDir}\n`);
  out(`restored ${r.restored.join(', ')} into ${r.dataDir}\n`);
  if (!r.backup.files.has('sync-device.json')) {
    const moved = r.replacedDir && existsSync(join(r.replacedDir, 'sync-device.json'));
    out(
      `the backup holds no sync device identity (taken before 'sync enrol')${
        moved
          ? `; to sync as the device this data directory had, copy ${join(r.replacedDir!, 'sync-device.json')} back before starting`
          : ''
      }\n`,
    );
  } else {
    out(
      'sync: the box keeps its device identity; at its first hello the central hands back what it took after the backup\n',
    );
  }
  out(`start the box on ${r.dataDir}\n`);
  return 0;
}

const mib = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`;
