import { connect, type Socket } from 'node:net';
import { tcpLocation } from './printers.js';
import { DLE_EOT_4, type PaperStatus, PrinterError, StatusReader } from './printer-status.js';

export interface TcpOptions {
  host: string;
  port: number;
  /** Ask `DLE EOT 4` before each job, and after it as the printer's receipt; off for printers that never answer. */
  statusQuery: boolean;
  /** Connect timeout, status answer timeout and write timeout (printing.statusTimeoutMs). */
  timeoutMs: number;
}

/** How often the kernel probes an idle connection, so a printer switched off between jobs is noticed. */
const KEEPALIVE_MS = 10_000;

/**
 * One network receipt printer on raw TCP (JetDirect/AppSocket, port 9100): the same contract as SerialPrinter
 * (printer-worker.ts PrinterDevice). Connects lazily and keeps the connection between jobs; a printer that
 * closes it (after each job, or switched off) is connected again at the next job.
 *
 * A write's callback only says the bytes reached the kernel, not the printer. So with statusQuery, `print`
 * also asks `DLE EOT 4` after the bytes and resolves on the answer (or on the printer closing the connection in
 * order): TCP is in order, so an answer means the printer has read the whole ticket (docs/printing.md
 * "Network printers").
 */
export class TcpPrinter {
  private socket: Socket | undefined;
  private readonly replies = new StatusReader();
  /** Connections the printer closed in order (a FIN, not a reset): it had read all we sent (below). */
  private readonly hungUp = new WeakSet<Socket>();
  readonly where: string;

  constructor(private readonly options: TcpOptions) {
    this.where = tcpLocation(options.host, options.port);
  }

  private open(): Promise<Socket> {
    const current = this.socket;
    if (current && !current.destroyed && !current.connecting && current.writable) return Promise.resolve(current);
    this.close();
    const { host, port, timeoutMs } = this.options;
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port, noDelay: true, keepAlive: true, keepAliveInitialDelay: KEEPALIVE_MS });
      this.socket = socket;
      this.replies.reset();
      const timer = setTimeout(() => {
        this.close(socket);
        reject(new PrinterError('offline', `cannot connect to ${this.where} in ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(socket);
      });
      socket.on('data', (chunk: Buffer) => {
        if (this.socket === socket) this.replies.push(chunk);
      });
      socket.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        // Refused or unreachable: like a serial port that is not there, the job waits and the worker retries.
        const reason = err.code === 'ECONNREFUSED' || err.code === 'ENOTFOUND' ? 'missing' : 'io';
        reject(new PrinterError(reason, `cannot connect to ${this.where}: ${err.code ?? err.message}`)); // no-op once connected
        this.gone(socket, new PrinterError('io', `connection to ${this.where} failed: ${err.code ?? err.message}`));
      });
      // The printer closed its side (some do after each job): ours goes too, and the next job connects again.
      socket.on('end', () => {
        this.hungUp.add(socket);
        this.gone(socket, new PrinterError('io', `${this.where} closed the connection`));
      });
      socket.on('close', () => {
        clearTimeout(timer);
        reject(new PrinterError('io', `${this.where} closed the connection`)); // no-op once settled
        this.gone(socket, new PrinterError('io', `${this.where} closed the connection`));
      });
    });
  }

  /** The paper state, or throws when the printer cannot be reached or does not answer in time. */
  async paperStatus(): Promise<PaperStatus> {
    if (!this.options.statusQuery) return 'ok';
    const socket = await this.open();
    try {
      return await this.ask(socket);
    } catch (err) {
      // The printer hung up the kept connection just now (after the last job, or idle): ask on a new one.
      if (!this.hungUp.has(socket)) throw err;
      return this.ask(await this.open());
    }
  }

  /**
   * Writes a whole job; resolves once the bytes are handed to the kernel with the connection whole, and with
   * statusQuery only once the printer has answered a `DLE EOT 4` sent after them.
   */
  async print(bytes: Uint8Array): Promise<void> {
    const socket = await this.open();
    await this.write(socket, Buffer.from(bytes));
    if (!this.options.statusQuery) return;
    try {
      await this.ask(socket);
    } catch (err) {
      // An orderly close instead of the answer: a printer that takes one job a connection. Its TCP stack would
      // have reset the connection, not closed it, had our bytes still been unread (docs/printing.md
      // "Network printers"); a reset or silence is a failure and the job is printed again.
      if (!this.hungUp.has(socket)) throw err;
    }
  }

  private async ask(socket: Socket): Promise<PaperStatus> {
    this.replies.reset();
    const answer = this.replies.next(this.where, this.options.timeoutMs);
    answer.catch(() => undefined); // handled below; a failed write must not leave it unhandled
    try {
      await this.write(socket, DLE_EOT_4);
    } catch (err) {
      this.replies.abort(err as PrinterError); // no answer will come: end the wait now, not at its timeout
      throw err;
    }
    try {
      return await answer;
    } catch (err) {
      // No answer: the connection may be half dead (a printer switched off without a FIN). Start afresh.
      this.close(socket);
      throw err;
    }
  }

  private write(socket: Socket, bytes: Buffer): Promise<void> {
    const { timeoutMs } = this.options;
    return new Promise((resolve, reject) => {
      if (socket.destroyed || !socket.writable) {
        reject(new PrinterError('io', `${this.where} closed the connection`));
        return;
      }
      const timer = setTimeout(() => {
        this.close(socket);
        reject(new PrinterError('timeout', `write to ${this.where} did not finish in ${timeoutMs} ms`));
      }, timeoutMs);
      socket.write(bytes, (err) => {
        clearTimeout(timer);
        if (err || socket.destroyed) {
          this.close(socket);
          reject(new PrinterError('io', `write to ${this.where} failed: ${err?.message ?? 'connection closed'}`));
        } else resolve();
      });
    });
  }

  private gone(socket: Socket, err: PrinterError): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    this.replies.abort(err);
    socket.destroy();
  }

  /** Closes the given connection (by default the current one); an old one's late events never touch a newer one. */
  close(socket: Socket | undefined = this.socket): void {
    if (!socket) return;
    if (socket === this.socket) {
      this.socket = undefined;
      this.replies.abort(new PrinterError('io', `connection to ${this.where} closed`));
    }
    socket.destroy();
  }
}
