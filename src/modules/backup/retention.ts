/**
 * Which backups survive (docs/operations.md "Backups and restore", retention), a pure function of their times:
 * - the newest backup of each of the `keepHourly` most recent UTC hours that have a backup;
 * - the newest backup of each of the `keepDaily` most recent UTC days that have a backup;
 * - the newest backup of all, whatever the counts.
 * Everything else goes. Hours and days without a backup (the box was off, the stick was out) do not count, so
 * a box that was off for a week still keeps 48 hourly and 14 daily backups from before.
 */
export interface RetentionRule {
  keepHourly: number;
  keepDaily: number;
}

export type KeptBy = 'newest' | 'hourly' | 'daily';

export interface Backup {
  name: string;
  takenMs: number;
}

const HOUR = 3_600_000;
const DAY = 86_400_000;

/** Each kept backup's name with the rules that keep it; a name not in the map is to be removed. */
export function retain(backups: readonly Backup[], rule: RetentionRule): Map<string, KeptBy[]> {
  const newestFirst = [...backups].sort((a, b) => b.takenMs - a.takenMs || (a.name < b.name ? 1 : -1));
  const kept = new Map<string, KeptBy[]>();
  const keep = (name: string, why: KeptBy) => kept.set(name, [...(kept.get(name) ?? []), why]);
  if (newestFirst[0]) keep(newestFirst[0].name, 'newest');
  for (const [period, count, why] of [
    [HOUR, rule.keepHourly, 'hourly'],
    [DAY, rule.keepDaily, 'daily'],
  ] as const) {
    const seen = new Set<number>();
    for (const b of newestFirst) {
      const bucket = Math.floor(b.takenMs / period);
      if (seen.has(bucket)) continue;
      if (seen.size === count) break;
      seen.add(bucket);
      keep(b.name, why);
    }
  }
  return kept;
}
