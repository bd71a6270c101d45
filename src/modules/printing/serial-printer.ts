import { SerialPort } from 'serialport';
import { DLE_EOT_4, type PaperStatus, PrinterError, StatusReader } from './printer-status.js';

export interface SerialOptions {
  path: string;
  baudRate: number;
  /** Ask `DLE EOT 4` before each job; off for printers that do not answer it. */
  statusQuery: boolean;
  timeoutMs: number;
}

/**
 * One serial receipt printer. Opens lazily, reopens after an error, and never reports a write as done before
 * the bytes are drained to the port.
 */
export class SerialPrinter {
  private port: SerialPort | undefined;
  private readonly replies = new StatusReader();

  constructor(private readonly options: SerialOptions) {}

  private async open(): Promise<SerialPort> {
    if (this.port?.isOpen) return this.port;
    const port = new SerialPort({ path: this.options.path, baudRate: this.options.baudRate, autoOpen: false });
    await new Promise<void>((resolve, reject) =>
      port.open((err) =>
        err ? reject(new PrinterError('missing', `cannot open ${this.options.path}: ${err.message}`)) : resolve(),
      ),
    );
    port.on('data', (chunk: Buffer) => this.replies.push(chunk));
    port.on('close', () => {
      if (this.port === port) this.port = undefined;
    });
    port.on('error', () => this.close(port));
    this.port = port;
    this.replies.reset();
    return port;
  }

  /** The paper state, or throws when the printer does not answer in time. */
  async paperStatus(): Promise<PaperStatus> {
    if (!this.options.statusQuery) return 'ok';
    const port = await this.open();
    this.replies.reset();
    await this.writeRaw(port, DLE_EOT_4);
    return this.replies.next(this.options.path, this.options.timeoutMs);
  }

  /** Writes a whole job and resolves only when the bytes have left for the device. */
  async print(bytes: Uint8Array): Promise<void> {
    const port = await this.open();
    await this.writeRaw(port, Buffer.from(bytes));
  }

  private writeRaw(port: SerialPort, bytes: Buffer): Promise<void> {
    // Time a serial line needs for these bytes (10 bits a byte), plus the configured slack.
    const budget = this.options.timeoutMs + Math.ceil((bytes.length * 10 * 1000) / this.options.baudRate);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.close(port);
        reject(new PrinterError('timeout', `write to ${this.options.path} did not drain in ${budget} ms`));
      }, budget);
      port.write(bytes, (err) => {
        if (err) {
          clearTimeout(timer);
          this.close(port);
          reject(new PrinterError('io', `write to ${this.options.path} failed: ${err.message}`));
          return;
        }
        port.drain((drainErr) => {
          clearTimeout(timer);
          if (drainErr) {
            this.close(port);
            reject(new PrinterError('io', `drain of ${this.options.path} failed: ${drainErr.message}`));
          } else resolve();
        });
      });
    });
  }

  /**
   * Closes the given port (by default the current one). Late callbacks of an old port pass that port, so they
   * never close a newer one opened since.
   */
  close(port: SerialPort | undefined = this.port): void {
    if (port === this.port) this.port = undefined;
    if (port?.isOpen) port.close(() => undefined);
  }
}
