import { statSync } from 'node:fs';
import { freeBytesOf } from '../shared/files.js';

/**
 * The share of the data disk's room the WAL may take (docs/operations.md "The WAL on a small disk"). The room is
 * the free space above `storage.minFreeBytes`, counting the WAL file's own bytes (what it would be with the WAL
 * emptied). Past it a checkpoint is due whatever `walBytes` says, and the WAL file is trimmed to it when the WAL
 * restarts. A quarter keeps the WAL well under the free space beside it (a checkpoint grows the database file by
 * at most the WAL's size; the watchdog stops writes before the WAL could take that room, at half the room) and
 * leaves three quarters of the room to what the box keeps.
 */
export const WAL_ROOM_SHARE = 0.25;

/**
 * A WAL file this small is never worth trimming on its own: SQLite keeps at least the frames of the first commit
 * after a restart, and a file above the allowance but under this would make every look at it due, a restart of
 * the WAL (and its fsync) four times a second for nothing.
 */
export const WAL_TRIM_MIN_BYTES = 64 * 1024;

/**
 * The lowest `storage.minFreeBytes` the box starts with (docs/operations.md "The WAL on a small disk"). The floor
 * is kept free beside the WAL file (the watchdog counts the WAL as used), and what passes it comes out of it: the
 * writes after the watchdog's last look, and whatever a checkpoint takes beyond the WAL's reserve. Under a burst
 * of a few hundred orders a second on an 8 MiB disk no checkpoint failed with 1 MiB; below, the box could stop at
 * a floor its own checkpoint cannot get past, for good.
 */
export const MIN_FLOOR_BYTES = 1024 * 1024;

/**
 * The bytes the WAL may take now: WAL_ROOM_SHARE of the free space above `minFreeBytes`, the WAL file's own bytes
 * counted as free. 0 at or below the floor.
 */
export function walAllowance(freeBytes: number, walFileBytes: number, minFreeBytes: number): number {
  return Math.floor(WAL_ROOM_SHARE * Math.max(0, freeBytes + walFileBytes - minFreeBytes));
}

/** The WAL file's size, 0 when there is none (yet, or no more: nothing of the disk is the WAL's then). */
export function walFileBytesOf(walFile: string): number {
  try {
    return statSync(walFile).size;
  } catch {
    return 0;
  }
}

/**
 * The WAL's allowance on the data disk of `walFile` now (a statfs and a stat: the checkpointer looks four times a
 * second), and the WAL file's size. Infinity when the disk cannot be measured: the checkpointer then goes by
 * `walBytes` alone, as it did before, rather than checkpoint at every look.
 */
export function measureWalRoom(
  dataDir: string,
  walFile: string,
  minFreeBytes: number,
): { allowance: number; walFileBytes: number } {
  const walFileBytes = walFileBytesOf(walFile);
  try {
    return { allowance: walAllowance(freeBytesOf(dataDir), walFileBytes, minFreeBytes), walFileBytes };
  } catch {
    return { allowance: Number.POSITIVE_INFINITY, walFileBytes };
  }
}

/** Why `minFreeBytes` cannot work, for the configuration's check; undefined when it can. */
export function floorProblem(minFreeBytes: number): string | undefined {
  if (minFreeBytes >= MIN_FLOOR_BYTES) return undefined;
  return (
    `/storage/minFreeBytes: ${minFreeBytes} is below ${MIN_FLOOR_BYTES}, the room a WAL checkpoint needs at the ` +
    'floor (docs/operations.md "The WAL on a small disk")'
  );
}
