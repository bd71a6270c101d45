import { freeBytesOf } from '../../shared/files.js';
import type { Logger } from '../../log.js';

export interface DiskWatchdogOptions {
  /** The data directory: the filesystem that holds the database and its WAL. */
  dir: string;
  /** Below this many free bytes every write request is refused with 503 storageFull. */
  minFreeBytes: number;
  /** Below this many free bytes a warning goes to the log (once per crossing, then every WARN_REPEAT_MS). */
  warnFreeBytes: number;
  log: Logger;
  now(): number;
  /** Free bytes of the filesystem holding `dir`; statfs by default (tests pass a fake). */
  freeBytes?: (dir: string) => number;
}

/** How long a status is trusted at most: one statfs a second, however many requests arrive. */
const RECHECK_MS = 1000;
const WARN_REPEAT_MS = 10 * 60_000;

/** 'low': below warnFreeBytes (a warning); 'full': below minFreeBytes (writes refused). */
export type DiskLevel = 'ok' | 'low' | 'full';
type Level = DiskLevel;

/**
 * Watches the free space of the data directory's disk so that a full disk is answered as "retry later"
 * (503 storageFull) before SQLite fails mid-write, instead of looking like a bug (500). Reads never ask it.
 *
 * The check is lazy and cached: a write request costs a clock read, and a statfs at most once a second, or
 * sooner when the disk went down fast enough since the last look to reach the floor within the second (at half
 * the time the last rate would take to get there), and at every write (once a ms at most) below `warnFreeBytes`:
 * a burst of orders writes megabytes a second, and a floor passed by more than it holds leaves no room for the
 * checkpoint that would empty the WAL (docs/operations.md "The WAL on a small disk"). A statfs is a microsecond
 * or two.
 * After SQLite reports SQLITE_FULL anyway (the floor too low for one transaction, a quota, inodes), the box
 * counts as full for one interval whatever statfs says, then looks again: it recovers by itself.
 */
export function createDiskWatchdog(o: DiskWatchdogOptions) {
  const measure = o.freeBytes ?? freeBytesOf;
  let level: Level = 'ok';
  let free = Number.POSITIVE_INFINITY;
  let checkedAt = Number.NEGATIVE_INFINITY;
  /** How long the last look is trusted (ms): RECHECK_MS, or less while the disk goes down fast near the floor. */
  let trustMs = 0;
  /** Bytes a ms the disk lost between the last two looks, or half the one before when it lost less (or gained). */
  let rate = 0;
  let fullUntil = Number.NEGATIVE_INFINITY;
  let warnedAt = Number.NEGATIVE_INFINITY;

  function check(): void {
    const now = o.now();
    const before = { free, at: checkedAt };
    checkedAt = now;
    trustMs = RECHECK_MS;
    try {
      free = measure(o.dir);
    } catch (err) {
      // A statfs that fails says nothing about space: keep serving, SQLite's own error still maps to 503.
      o.log.warn({ err, dir: o.dir }, 'cannot read free space of the data directory');
      return;
    }
    // Halved at each look that saw less, not forgotten: a WAL trimmed gives space back between two bursts.
    const lost = Number.isFinite(before.free) && now > before.at ? (before.free - free) / (now - before.at) : 0;
    rate = Math.max(lost, rate / 2);
    if (free < o.warnFreeBytes && free >= o.minFreeBytes) trustMs = 1;
    else if (rate > 0 && free >= o.minFreeBytes) trustMs = Math.min(RECHECK_MS, (free - o.minFreeBytes) / rate / 2);
    const next: Level = now < fullUntil || free < o.minFreeBytes ? 'full' : free < o.warnFreeBytes ? 'low' : 'ok';
    report(next, now);
    level = next;
  }

  function report(next: Level, now: number): void {
    const fields = { dir: o.dir, freeBytes: free, minFreeBytes: o.minFreeBytes, warnFreeBytes: o.warnFreeBytes };
    if (next === 'full' && level !== 'full') {
      o.log.error(fields, 'data disk is full: write requests are refused with 503 until space is freed');
    } else if (next === 'low' && (level !== 'low' || now - warnedAt >= WARN_REPEAT_MS)) {
      warnedAt = now;
      o.log.warn(fields, 'data disk is nearly full (below storage.warnFreeBytes)');
    } else if (next === 'ok' && level !== 'ok') {
      o.log.info(fields, 'data disk has space again');
    }
  }

  return {
    /** True while writes must be refused; re-measures when the last look is older than it is trusted for. */
    full(): boolean {
      if (o.now() - checkedAt >= trustMs) check();
      return level === 'full';
    },
    /** SQLite said SQLITE_FULL: refuse writes for one interval, then measure again. */
    noteFull(): void {
      fullUntil = o.now() + RECHECK_MS;
      check();
    },
    /** The last measured free bytes (Infinity before the first look). */
    freeBytes: (): number => free,
    /** The level of the last look (call full() first for a fresh one). */
    level: (): DiskLevel => level,
  };
}
export type DiskWatchdog = ReturnType<typeof createDiskWatchdog>;
