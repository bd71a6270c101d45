import { readFileSync } from 'node:fs';

/** The salts of a database's WAL header (https://sqlite.org/walformat.html): new ones at every restart of the WAL. */
export const walSalts = (dbFile: string): string => readFileSync(`${dbFile}-wal`).subarray(16, 24).toString('hex');
