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
  /**
   * Bytes of the free space already promised, measured at each look: the WAL file's size, what its checkpoint may
   * need at most to grow the database file (docs/operations.md "The WAL on a small disk"). The floor is kept above
   * them. None by default.
   */
  reservedBytes?: () => number;
}

/** How long a status is trusted at most: one statfs a second, however many requests arrive. */
const RECHECK_MS = 1000;

/**
 * The fastest the box is assumed to fill its disk, in bytes a ms (64 MB/s): a look is trusted only for as long as
 * this rate would take to reach the floor. A burst of orders with no pause wrote some 8 MB/s here, most of it WAL;
 * an idle box's last look says nothing of the burst that starts after it.
 */
const PEAK_BYTES_PER_MS = 64_000;
const WARN_REPEAT_MS = 10 * 60_000;

/** 'low': below warnFreeBytes (a warning); 'full': below minFreeBytes (writes refused). */
export type DiskLevel = 'ok' | 'low' | 'full';
type Level = DiskLevel;

/**
 * Watches the free space of the data directory's disk so that a full disk is answered as "retry later"
 * (503 storageFull) before SQLite fails mid-write, instead of looking like a bug (500). Reads never ask it.
 *
 * The check is lazy and cached: a write request costs a clock read, and a statfs at most once a second, or
 * sooner when PEAK_BYTES_PER_MS could reach the floor within the second, and at every write (once a ms at most)
 * below `warnFreeBytes` (less `reservedBytes`): a burst of orders writes megabytes a second, and a floor passed
 * by more than it holds leaves no room for the checkpoint that would empty the WAL (docs/operations.md "The WAL on
 * a small disk"). A statfs is a microsecond or two.
 * The floor counts from the free space less `reservedBytes`: writes stop while the WAL's checkpoint still has the
 * room it may need, so the checkpoint always can give the room back.
 * After SQLite reports SQLITE_FULL anyway (the floor too low for one transaction, a quota, inodes), the box
 * counts as full for one interval whatever statfs says, then looks again: it recovers by itself.
 */
export function createDiskWatchdog(o: DiskWatchdogOptions) {
  const measure = o.freeBytes ?? freeBytesOf;
  let level: Level = 'ok';
  let free = Number.POSITIVE_INFINITY;
  let reserved = 0;
  let checkedAt = Number.NEGATIVE_INFINITY;
  /** How long the last look is trusted (ms): RECHECK_MS, or less near the floor. */
  let trustMs = 0;
  let fullUntil = Number.NEGATIVE_INFINITY;
  let warnedAt = Number.NEGATIVE_INFINITY;

  function check(): void {
    const now = o.now();
    checkedAt = now;
    trustMs = RECHECK_MS;
    try {
      free = measure(o.dir);
      reserved = o.reservedBytes?.() ?? 0;
    } catch (err) {
      // A statfs that fails says nothing about space: keep serving, SQLite's own error still maps to 503.
      o.log.warn({ err, dir: o.dir }, 'cannot read free space of the data directory');
      return;
    }
    const usable = free - reserved;
    // At the floor a look is trusted for RECHECK_MS: no write passes the guard then, and space comes back slowly.
    if (usable >= o.minFreeBytes) {
      trustMs = usable < o.warnFreeBytes ? 1 : Math.min(RECHECK_MS, (usable - o.minFreeBytes) / PEAK_BYTES_PER_MS);
    }
    const next: Level = now < fullUntil || usable < o.minFreeBytes ? 'full' : free < o.warnFreeBytes ? 'low' : 'ok';
    report(next, now);
    level = next;
  }

  function report(next: Level, now: number): void {
    const fields = {
      dir: o.dir,
      freeBytes: free,
      walBytes: reserved,
      minFreeBytes: o.minFreeBytes,
      warnFreeBytes: o.warnFreeBytes,
    };
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
