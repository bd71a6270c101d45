/** Wall clock in one place so tests and logs agree on the source of time. */
export const nowMs = (): number => Date.now();
export const nowIso = (): string => new Date().toISOString();
export const isoOf = (ms: number): string => new Date(ms).toISOString();
