import { existsSync, mkdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { UpdateReason, UpdateReport, UpdateState } from '../../shared/release-schemas.js';
import { fsyncPath, writeFileDurably } from '../../shared/files.js';

/**
 * What the box keeps about updates in DATA_DIR/update (docs/operations.md "Updating boxes"): the install journal,
 * which says what an install was doing when the power went (the program that starts next reads it first), and
 * the status the hello reports. Both are small JSON files replaced whole: written to a temp name, fsynced,
 * renamed, the directory fsynced, so a power cut leaves the old file or the new one, never half of one.
 */
export const UPDATE_DIR = 'update';
const JOURNAL = 'install.json';
const STATUS = 'status.json';

/**
 * An install under way. `trial`: the new release runs beside nothing, on loopback, under the old one's watch;
 * `switching`: it passed and the links are being swapped; `switched`: `current` names it and it must come up for
 * real within `maxStarts` starts, else the unit's guard puts the old one back.
 */
export interface InstallJournal {
  phase: 'trial' | 'switching' | 'switched';
  from: string;
  to: string;
  sha256: string;
  /** The signed release's signature: what a failure is kept by (src/modules/update/state.ts markFailed). */
  key: string;
  rollout?: string;
  /** The backup taken after the old release stopped, before the new one touched the database. */
  backup: string | null;
  /** PRAGMA user_version before the trial. */
  schemaBefore: number;
  /** Starts of the new release since the switch. */
  starts: number;
  /** When the install began (the box's clock), shown by `update status`. */
  startedMs: number;
  /** The release keys to trust once the new release is confirmed (a rotation its manifest carried). */
  releaseKeys: string[];
}

/** The state reported in every hello, and what the box will not try again. */
export interface UpdateStatus {
  state: UpdateState;
  target?: string;
  sha256?: string;
  rollout?: string;
  progress?: { bytes: number; total: number };
  reason?: UpdateReason;
  detail?: string;
  since: number;
  /**
   * Signed releases refused or rolled back on this box, by their signature: never installed again by themselves.
   * A release signed anew (headquarters' answer to a refusal, such as the same bytes signed as a rollback
   * release) has another signature, and gets its chance. The newest MAX_KEPT are kept.
   */
  refused: Record<string, { version: string; reason: UpdateReason }>;
  /** Installs of a release cut short by a power cut, by signature: after three it counts as rolled back. */
  interrupted: Record<string, number>;
  /** Downloads whose bytes did not verify, by signature: after three the release is refused. */
  failures?: Record<string, number>;
  /** Release keys learnt from a rotation (replacing the configured ones), once a release signed so installed. */
  releaseKeys?: string[];
  /** After a forced rollback: when its release was signed; nothing signed before it is installed (refusalFor). */
  signedAfter?: string;
  /** No install before this (the box's clock, ms): the backup before the last one failed. */
  installAfterMs?: number;
}

export const emptyStatus = (now: number): UpdateStatus => ({ state: 'idle', since: now, refused: {}, interrupted: {} });

export function updateDir(dataDir: string): string {
  const dir = join(dataDir, UPDATE_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  return dir;
}

function readJson<T>(file: string): T | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    // Written by rename only, so never torn; unreadable means edited by hand: treated as absent, and replaced.
    return undefined;
  }
}

export function writeJsonDurably(file: string, value: unknown): void {
  writeFileDurably(file, `${JSON.stringify(value, null, 2)}\n`, 0o640);
}

export function readJournal(dataDir: string): InstallJournal | undefined {
  return readJson<InstallJournal>(join(dataDir, UPDATE_DIR, JOURNAL));
}

export function writeJournal(dataDir: string, journal: InstallJournal | undefined): void {
  const file = join(updateDir(dataDir), JOURNAL);
  if (journal) {
    writeJsonDurably(file, journal);
    return;
  }
  if (!existsSync(file)) return;
  unlinkSync(file);
  fsyncPath(join(file, '..'), true);
}

export function readStatus(dataDir: string, now: number): UpdateStatus {
  const s = readJson<UpdateStatus>(join(dataDir, UPDATE_DIR, STATUS));
  return s ? { ...emptyStatus(now), ...s } : emptyStatus(now);
}

export function writeStatus(dataDir: string, status: UpdateStatus): void {
  writeJsonDurably(join(updateDir(dataDir), STATUS), status);
}

/** How many refusals (and counts of interrupted installs) the status keeps: a hostile central cannot grow it. */
const MAX_KEPT = 50;

const newest = <T>(map: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(map).slice(-MAX_KEPT));

/** A release that failed here: the status says why, and the box never installs it again by itself. */
export function markFailed(
  status: UpdateStatus,
  failed: { version: string | undefined; sha256?: string; key: string; rollout?: string },
  state: 'rolledBack' | 'refused',
  reason: UpdateReason,
  detail: string,
  now: number,
): UpdateStatus {
  return {
    ...status,
    state,
    target: failed.version,
    sha256: failed.sha256,
    rollout: failed.rollout,
    progress: undefined,
    reason,
    detail: detail.slice(0, 500),
    since: now,
    refused: newest({ ...status.refused, [failed.key]: { version: failed.version ?? '', reason } }),
    interrupted: newest(status.interrupted),
  };
}

/** The report a hello carries. */
export function reportOf(status: UpdateStatus, program: { version: string; arch: string; node: string }): UpdateReport {
  return {
    version: program.version,
    arch: program.arch as UpdateReport['arch'],
    node: program.node,
    state: status.state,
    ...(status.target !== undefined ? { target: status.target } : {}),
    ...(status.rollout !== undefined ? { rollout: status.rollout } : {}),
    ...(status.progress ? { progress: status.progress } : {}),
    ...(status.reason ? { reason: status.reason } : {}),
    ...(status.detail ? { detail: status.detail } : {}),
    since: status.since,
  };
}
