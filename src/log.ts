import pino from 'pino';

/** Structured logs: one JSON object a line on stdout (journald keeps them on the box). */
export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'venue-box' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}
