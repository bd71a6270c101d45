import type { Logger } from '../log.js';

/**
 * Resolves once a SIGTERM or SIGINT has stopped `service` (the box or the central): the first signal stops it,
 * later ones are ignored while it stops; a failed stop is logged, and the process ends all the same.
 */
export function untilSignal(service: { stop(): Promise<void> }, log: Logger): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'stopping');
      service.stop().then(resolve, (err: unknown) => {
        log.error({ err }, 'stopping failed');
        resolve();
      });
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
}
