/**
 * Backup file names: `venue-box-20260412T130000.123Z.backup`, the UTC time it was taken (ISO 8601 basic format:
 * no colons, which FAT and exFAT sticks refuse; sorts by time as text). Temp files start with a dot and end in
 * `.tmp`, so no half-written file ever matches (docs/operations.md "Backups and restore").
 */
const NAME = /^venue-box-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{3})Z\.backup$/;

export const backupName = (takenMs: number): string => {
  const iso = new Date(takenMs).toISOString(); // 2026-04-12T13:00:00.123Z
  return `venue-box-${iso.slice(0, 10).replaceAll('-', '')}T${iso.slice(11, 19).replaceAll(':', '')}.${iso.slice(20, 23)}Z.backup`;
};

/** When the backup of this file name was taken (ms since the epoch), or undefined for any other name. */
export function takenMsOf(name: string): number | undefined {
  const m = NAME.exec(name);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, ms] = m.map(Number) as number[];
  const t = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!, ms!);
  return backupName(t) === name ? t : undefined;
}

/** A temp file of a backup being written: `.venue-box-<time>.<pid>.tmp` (and SQLite's `-journal` beside it). */
export const tempName = (takenMs: number, pid: number): string => `.${backupName(takenMs)}.${pid}.tmp`;
const TEMP = /^\.venue-box-.*\.backup\.(\d+)\.tmp(-journal|-wal|-shm)?$/;

/** The pid that writes this temp file, or undefined when the name is not a backup's temp file. */
export function tempOwnerOf(name: string): number | undefined {
  const m = TEMP.exec(name);
  return m ? Number(m[1]) : undefined;
}
