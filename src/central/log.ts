import pino from 'pino';
import type { Logger } from '../log.js';

/** The central's logs: JSON lines on stdout like the box's, told apart by `service`. */
export function createCentralLogger(level = 'info'): Logger {
  return pino({
    level,
    base: { service: 'venue-box-central' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}
