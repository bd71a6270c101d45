import type { Logger } from '../../log.js';
import { linkedVersion, pointLink } from './layout.js';
import { markFailed, readJournal, readStatus, writeJournal, writeStatus } from './state.js';
import { restoreForOldRelease } from './trial.js';

/** Installs of one release cut short by power cuts before it counts as rolled back (and is not tried again). */
const MAX_INTERRUPTED = 3;

/**
 * Run by `serve` before it opens the database (docs/operations.md "Updating boxes"): an install the journal says
 * was cut short (a power cut or kill -9 during the trial, or before the links were swapped) while this process is
 * the old release: the data is put back for it and the install is tried again in the next window (after three
 * such tries the release counts as rolled back). The new release, started after the swap, has nothing to do
 * here: it confirms the install once its services are up (src/modules/update/agent.ts).
 */
export function recoverInterruptedInstall(dataDir: string, version: string, log: Logger, now: number): void {
  const journal = readJournal(dataDir);
  if (!journal) return;
  if (journal.to === version && journal.phase !== 'trial') return;
  if (journal.from !== version) {
    log.warn({ journal, version }, 'an install journal about other releases: discarded');
    writeJournal(dataDir, undefined);
    return;
  }
  restoreForOldRelease(dataDir, journal, log);
  writeJournal(dataDir, undefined);
  const status = readStatus(dataDir, now);
  const tries = (status.interrupted[journal.key] ?? 0) + 1;
  const interrupted = { ...status.interrupted, [journal.key]: tries };
  const failed = journal.phase === 'switched';
  if (failed || tries >= MAX_INTERRUPTED) {
    const detail = failed
      ? `${journal.to} did not come up after the switch; ${version} was put back`
      : `the install was cut short ${tries} times`;
    writeStatus(dataDir, {
      ...markFailed(
        status,
        { version: journal.to, sha256: journal.sha256, key: journal.key, rollout: journal.rollout },
        'rolledBack',
        failed ? 'crashLoop' : 'interrupted',
        detail,
        now,
      ),
      interrupted,
    });
    log.error({ from: version, to: journal.to, detail }, 'update rolled back');
    return;
  }
  writeStatus(dataDir, {
    ...status,
    state: 'verified',
    interrupted,
    detail: 'the install was cut short; tried again in the next window',
    since: now,
  });
  log.warn(
    { from: version, to: journal.to, tries },
    'an install was cut short (power cut?): the old release runs; it is tried again',
  );
}

/**
 * `venue-box update guard`, run by the systemd unit before every start (ExecStartPre, with the previous release's
 * binary): counts the starts of a release switched to but not yet confirmed; past `maxStarts` it points `current`
 * back at the previous release, which then starts and finds the data as it left it (restored from the
 * pre-install backup when the new release had migrated it). It never fails the start: whatever it cannot do is
 * logged, and the unit starts `current` as it is.
 */
export function guardStart(dataDir: string, dir: string, maxStarts: number, log: Logger): string {
  const journal = readJournal(dataDir);
  if (!journal || journal.phase === 'trial') return 'no install under way';
  if (linkedVersion(dir, 'current') !== journal.to) return `current is not ${journal.to}: nothing to guard`;
  const starts = journal.starts + 1;
  if (starts <= maxStarts) {
    writeJournal(dataDir, { ...journal, phase: 'switched', starts });
    return `start ${starts} of ${maxStarts} of ${journal.to} before it must confirm`;
  }
  pointLink(dir, 'current', journal.from);
  // The old release starts next and, finding the journal, restores the data and records the rollback.
  writeJournal(dataDir, { ...journal, phase: 'switched', starts });
  log.error(
    { from: journal.to, to: journal.from, starts: journal.starts },
    'update: the new release did not come up; current points back at the old one',
  );
  return `${journal.to} did not come up in ${maxStarts} starts: current points at ${journal.from} again`;
}
