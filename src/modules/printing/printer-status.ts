/** Paper state from ESC/POS `DLE EOT 4` (transmit paper roll sensor status). */
export type PaperStatus = 'ok' | 'nearEnd' | 'out';

/** A printer failure: the job stays queued and the worker retries (printer-worker.ts). */
export class PrinterError extends Error {
  constructor(
    readonly reason: 'missing' | 'timeout' | 'offline' | 'paperOut' | 'io',
    message: string,
  ) {
    super(message);
  }
}

export const DLE_EOT_4 = Buffer.from([0x10, 0x04, 0x04]);

/** Reads the roll sensor byte: bits 5-6 paper end, bits 2-3 near end; bits 1 and 4 are fixed on, 0 and 7 off. */
export function parsePaperStatus(byte: number): PaperStatus | undefined {
  if ((byte & 0x93) !== 0x12) return undefined; // not a status byte
  if (byte & 0x60) return 'out';
  if (byte & 0x0c) return 'nearEnd';
  return 'ok';
}

/**
 * The bytes a printer sends back (serial line or TCP connection), read as answers to `DLE EOT 4`. A query
 * clears what came before it, so a late answer to an earlier query is never taken for the next one.
 */
export class StatusReader {
  private received: number[] = [];
  private onByte: (() => void) | undefined;
  private fail: ((err: PrinterError) => void) | undefined;

  /** Bytes from the printer. */
  push(chunk: Buffer): void {
    this.received.push(...chunk);
    this.onByte?.();
  }

  /** Forget what came before: call just before sending the query. */
  reset(): void {
    this.received = [];
  }

  /** The line or connection is gone: a pending wait fails at once instead of at its timeout. */
  abort(err: PrinterError): void {
    this.fail?.(err);
  }

  /** The first status byte received since the last reset, or `offline` after `timeoutMs`. */
  next(where: string, timeoutMs: number): Promise<PaperStatus> {
    return new Promise((resolve, reject) => {
      // Clears only its own handlers: a wait given up on never silences a newer one.
      const done = () => {
        clearTimeout(timer);
        if (this.onByte === check) this.onByte = undefined;
        if (this.fail === fail) this.fail = undefined;
      };
      const timer = setTimeout(() => {
        done();
        reject(new PrinterError('offline', `no status answer from ${where} in ${timeoutMs} ms`));
      }, timeoutMs);
      const fail = (err: PrinterError) => {
        done();
        reject(err);
      };
      this.fail = fail;
      const check = () => {
        while (this.received.length > 0) {
          const status = parsePaperStatus(this.received.shift()!);
          if (status) {
            done();
            resolve(status);
            return;
          }
        }
      };
      this.onByte = check;
      check();
    });
  }
}
