import { AppError } from '../shared/errors.js';

/** What a client refused for lack of space is told to wait: space comes back by a person's hand, not in ms. */
export const STORAGE_RETRY_AFTER_SECONDS = 10;

/** SQLite's "database or disk is full" (SQLITE_FULL and any extended code built on it). */
export const isStorageFull = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_FULL');
};

/**
 * The 503 a write gets while the data disk is full: "retry later", never a 500 that reads as a bug. Nothing
 * confirmed is at risk; the request was refused (or rolled back) before any 200.
 */
export const storageFullError = (): AppError => {
  const message = 'the box is out of storage space; try again later';
  return AppError.of('storageFull', message, [], {
    'Retry-After': String(STORAGE_RETRY_AFTER_SECONDS),
  });
};
