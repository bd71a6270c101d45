import type { Logger } from '../../log.js';
import type { PrinterConfig } from './printers.js';
import type { PrintJob, PrintRepo } from './repo.js';
import { type PrinterStatus, toTicket } from './schemas.js';
import { type PaperStatus, PrinterError } from './printer-status.js';
import { encodeTicket } from './tickets.js';

/** What the worker needs of a printer; SerialPrinter in the box, a fake in unit tests. */
export interface PrinterDevice {
  paperStatus(): Promise<PaperStatus>;
  /** Resolves only once the bytes are drained to the port. */
  print(bytes: Uint8Array): Promise<void>;
  close(): void;
}

export interface WorkerError {
  reason: string;
  message: string;
  atMs: number;
}

export interface WorkerTimings {
  kitchenMaxAgeMs: number;
  retryMinMs: number;
  retryMaxMs: number;
  statusPollMs: number;
  /** Longest idle sleep: how soon a backup notices a printer it backs up went down, and new jobs are seen without a wake. */
  idleTickMs: number;
}

/** What the worker shares with the spooler (spooler.ts). */
export interface WorkerContext {
  repo: PrintRepo;
  log: Logger;
  timings: WorkerTimings;
  now(): number;
  /** Jobs being printed right now, by any worker: nobody else touches them. */
  inFlight: Set<string>;
  /** The printers whose queues this worker prints besides its own (down longer than backupAfter). */
  divertedTo(name: string): { name: string; tenantId: string }[];
  statusChanged(worker: PrinterWorker, previous: PrinterStatus): void;
  /**
   * Resolves once an fsync of the database begun after the call is done: a job read may have been committed a
   * moment ago, not yet on the disk (docs/architecture.md "Durability and speed"), and no ticket is printed for an
   * order a power cut could take back. Absent: every commit is durable already.
   */
  synced?(): Promise<void>;
}

/**
 * One printer's worker: prints its queue in order, one ticket per job, and marks a job printed only after its
 * bytes are drained. Before each job it asks the paper status (DLE EOT 4) and holds the queue on paper out; any
 * error leaves the job queued and retries with a capped exponential backoff. Each queue is printed strictly in
 * order: only its head job is ever eligible, and a head being printed elsewhere (by the backup) blocks it.
 */
export class PrinterWorker {
  status: PrinterStatus = 'unknown';
  sinceMs: number | null = null;
  lastError: WorkerError | null = null;
  /** Since when the printer has failed without a success in between; undefined while it works (or is unknown). */
  downSinceMs: number | undefined;
  tenantId: string | undefined;
  /** Set by the spooler after the stop grace: the database may be closed, so touch nothing any more. */
  abandoned = false;
  private stopping = false;
  private interrupt: (() => void) | undefined;
  private lastContactMs = Number.NEGATIVE_INFINITY;
  private backoffMs: number;
  private loop: Promise<void> | undefined;

  constructor(
    readonly printer: PrinterConfig,
    readonly device: PrinterDevice,
    private readonly ctx: WorkerContext,
  ) {
    this.backoffMs = ctx.timings.retryMinMs;
  }

  get name(): string {
    return this.printer.name;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** New jobs may be waiting: end an idle sleep (never a backoff: a down printer keeps its pace). */
  wake(): void {
    if (!this.stopping) this.interrupt?.();
  }

  /** Stops after the current job; resolves when the loop has ended. */
  stop(): Promise<void> {
    this.stopping = true;
    this.interrupt?.();
    return this.loop ?? Promise.resolve();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        const job = this.tenantId === undefined ? undefined : this.nextJob();
        if (job) await this.printJob(job);
        else if (this.ctx.now() - this.lastContactMs >= this.pollMs()) await this.probe();
        else await this.rest(this.ctx.timings.idleTickMs, true);
      } catch (err) {
        // Not a printer error: a bug or the database refusing a write. Log it, keep the job, try again later.
        if (this.abandoned) return;
        this.ctx.log.error({ err, printer: this.name }, 'print worker failed; retrying');
        await this.rest(this.ctx.timings.retryMaxMs, false);
      }
    }
  }

  /** The oldest eligible job among this printer's queue and the queues diverted to it. */
  private nextJob(): PrintJob | undefined {
    let best: PrintJob | undefined;
    const sources = [{ name: this.name, tenantId: this.tenantId! }, ...this.ctx.divertedTo(this.name)];
    for (const source of sources) {
      const head = this.headOf(source.tenantId, source.name);
      if (head && (!best || head.seq < best.seq)) best = head;
    }
    return best;
  }

  /** A queue's head, expiring kitchen tickets too old to print by themselves; undefined when empty or blocked. */
  private headOf(tenantId: string, printer: string): PrintJob | undefined {
    for (;;) {
      const head = this.ctx.repo.head(tenantId, printer);
      if (!head || this.ctx.inFlight.has(head.id)) return undefined;
      if (head.kind !== 'kitchen' || this.ctx.now() - head.createdMs <= this.ctx.timings.kitchenMaxAgeMs) return head;
      if (this.ctx.repo.finish(tenantId, head.id, 'expired', null, this.ctx.now())) {
        this.ctx.log.warn({ printer, job: head.id, orderId: head.orderId }, 'kitchen ticket expired unprinted');
      }
    }
  }

  private async printJob(job: PrintJob): Promise<void> {
    let bytes: Uint8Array;
    const forPrinter = job.printer !== this.name ? (job.printer ?? undefined) : undefined;
    try {
      bytes = encodeTicket(toTicket(job.ticket), this.printer, { copy: job.copyOf !== null, forPrinter });
    } catch (err) {
      // Cannot happen with tickets the box writes; a job that can never print must not hold the queue.
      this.ctx.log.error({ err, job: job.id }, 'print job cannot be encoded');
      this.ctx.repo.finish(job.tenantId, job.id, 'failed', `cannot encode: ${(err as Error).message}`, this.ctx.now());
      return;
    }
    let failed = false;
    this.ctx.inFlight.add(job.id);
    try {
      await this.checkPaper();
      // Nothing new starts once stopping; and the row must still be queued (one claim per job, ever).
      if (this.stopping || !this.ctx.repo.isQueued(job.tenantId, job.id)) return;
      // That it is being sent, on the disk (and on the standby, which then never prints it a second time after a
      // takeover) before the first byte goes out.
      this.ctx.repo.markSending(job.tenantId, job.id, this.ctx.now());
      await this.ctx.synced?.();
      if (this.stopping || !this.ctx.repo.isQueued(job.tenantId, job.id)) return;
      await this.device.print(bytes);
      if (this.abandoned) return; // the shutdown gave up on this write: not recorded, printed again at start
      // Commit at once after the drain: this gap is the whole at-least-once window (docs/printing.md "Printing").
      this.ctx.repo.markPrinted(job.tenantId, job.id, this.name, this.ctx.now());
      this.succeeded();
      this.ctx.log.info(
        { printer: this.name, job: job.id, kind: job.kind, for: forPrinter, bytes: bytes.length },
        'ticket printed',
      );
    } catch (err) {
      if (this.abandoned || !(err instanceof PrinterError)) throw err;
      this.failed(err);
      this.ctx.repo.recordAttempt(job.tenantId, job.id, err.message);
      failed = true;
    } finally {
      this.ctx.inFlight.delete(job.id);
    }
    if (failed) {
      // The job is free during the backoff: the backup may take it once this printer is down long enough.
      await this.rest(this.backoffMs, false);
      this.backoffMs = Math.min(this.backoffMs * 2, this.ctx.timings.retryMaxMs);
    }
  }

  /** How often an idle printer is asked its status: the backoff while it is down, statusPollSeconds otherwise. */
  private pollMs(): number {
    return this.downSinceMs === undefined ? this.ctx.timings.statusPollMs : this.backoffMs;
  }

  /**
   * Idle: ask the status now and then, so staff see paper out or an unplugged printer before a job waits, and
   * a printer that is back is noticed while its queue is printed by its backup.
   */
  private async probe(): Promise<void> {
    if (!this.printer.statusQuery) {
      this.lastContactMs = this.ctx.now(); // nothing to ask: its status is known from its prints only
      return;
    }
    try {
      await this.checkPaper();
      this.succeeded();
    } catch (err) {
      if (this.abandoned || !(err instanceof PrinterError)) throw err;
      this.failed(err);
      this.backoffMs = Math.min(this.backoffMs * 2, this.ctx.timings.retryMaxMs);
    }
  }

  /** DLE EOT 4 (skipped for printers configured without statusQuery); throws on paper out or no answer. */
  private async checkPaper(): Promise<void> {
    this.lastContactMs = this.ctx.now();
    if (!this.printer.statusQuery) return;
    const paper = await this.device.paperStatus();
    if (paper === 'out') throw new PrinterError('paperOut', `${this.name}: paper out`);
    this.setStatus(paper === 'nearEnd' ? 'paperNearEnd' : 'ok');
    this.downSinceMs = undefined;
  }

  private succeeded(): void {
    if (this.status !== 'ok' && this.status !== 'paperNearEnd') this.setStatus('ok');
    this.downSinceMs = undefined;
    this.backoffMs = this.ctx.timings.retryMinMs;
  }

  private failed(err: PrinterError): void {
    const now = this.ctx.now();
    this.lastContactMs = now;
    this.lastError = { reason: err.reason, message: err.message, atMs: now };
    this.downSinceMs ??= now;
    this.setStatus(err.reason === 'paperOut' ? 'paperOut' : 'offline');
  }

  private setStatus(status: PrinterStatus): void {
    if (status === this.status || this.abandoned) return;
    const previous = this.status;
    this.status = status;
    this.sinceMs = this.ctx.now();
    this.ctx.statusChanged(this, previous);
  }

  /** Sleeps `ms`; stop always ends it, a wake only when `wakeable`. */
  private async rest(ms: number, wakeable: boolean): Promise<void> {
    if (this.stopping) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.interrupt = () => {
        if (wakeable || this.stopping) done();
      };
    });
    this.interrupt = undefined;
  }
}
