import type { Config } from '../../config.js';
import type { Logger } from '../../log.js';
import { type PrinterDevice, PrinterWorker, type WorkerContext, type WorkerError } from './printer-worker.js';
import type { PrinterConfig } from './printers.js';
import type { PrintRepo } from './repo.js';
import type { PrinterStatus } from './schemas.js';
import { openPrinterDevice } from './printer-device.js';

export type SpoolerOptions = Config['printing'];

/** A printer's status changed (published as PRINTER_STATUS on its venue's stream: status-events.ts). */
export interface StatusChange {
  tenantId: string;
  printer: PrinterConfig;
  status: PrinterStatus;
  previous: PrinterStatus;
  sinceMs: number;
  lastError: WorkerError | null;
  queueDepth: number;
}

export interface SpoolerDeps {
  repo: PrintRepo;
  printers: PrinterConfig[];
  options: SpoolerOptions;
  log: Logger;
  now(): number;
  onStatus?(change: StatusChange): void;
  /** The printer's device; a SerialPrinter or TcpPrinter as configured by default (tests pass a fake). */
  openDevice?(printer: PrinterConfig, timeoutMs: number): PrinterDevice;
  /** Longest idle sleep of a worker (default 500 ms). */
  idleTickMs?: number;
  /** How often old kitchen tickets of down printers are expired (default 1 s). */
  sweepMs?: number;
  /** Resolves once what was committed before the call is on the disk (WorkerContext.synced). */
  synced?(): Promise<void>;
  /**
   * This box has just taken over from a dead primary (docs/operations.md "A standby box"): the jobs that one had
   * begun sending are not printed again.
   */
  tookOver?: boolean;
}

export interface PrinterState {
  status: PrinterStatus;
  sinceMs: number | null;
  lastError: WorkerError | null;
  /** The backup printing this printer's jobs now, or null. */
  divertedTo: string | null;
}

/**
 * The print spooler: one worker per configured printer (printer-worker.ts), sharing the set of jobs in flight,
 * and the backup rule: while a printer has been down longer than `backupAfterSeconds`, its backup's worker
 * takes its queue too, printing each ticket with a header naming the printer it was for. A printer that comes
 * back takes its queue back at the next job.
 */
/** Why a job is failed after a takeover, as staff read it in the jobs list. */
export const SENT_BY_ANOTHER =
  'the box that was printing it stopped (the standby took over): reprint it if it did not come out';

export function createSpooler(deps: SpoolerDeps) {
  const { options } = deps;
  const backupAfterMs = options.backupAfterSeconds * 1000;
  const kitchenMaxAgeMs = options.kitchenMaxAgeMinutes * 60_000;
  const inFlight = new Set<string>();
  const workers = new Map<string, PrinterWorker>();
  const warned = new Set<string>();
  let sweepTimer: NodeJS.Timeout | undefined;

  const isDiverted = (w: PrinterWorker, now: number): boolean =>
    w.printer.backup !== undefined && w.downSinceMs !== undefined && now - w.downSinceMs >= backupAfterMs;

  const ctx: WorkerContext = {
    repo: deps.repo,
    log: deps.log,
    synced: deps.synced,
    now: deps.now,
    inFlight,
    timings: {
      kitchenMaxAgeMs,
      retryMinMs: options.retryMinMs,
      retryMaxMs: Math.max(options.retryMinMs, options.retryMaxMs),
      statusPollMs: options.statusPollSeconds * 1000,
      idleTickMs: deps.idleTickMs ?? 500,
    },
    divertedTo(name) {
      const now = deps.now();
      return [...workers.values()]
        .filter((w) => w.printer.backup === name && w.tenantId !== undefined && isDiverted(w, now))
        .map((w) => ({ name: w.name, tenantId: w.tenantId! }));
    },
    statusChanged(w, previous) {
      const level = w.status === 'ok' || w.status === 'paperNearEnd' ? 'info' : 'warn';
      deps.log[level](
        { printer: w.name, status: w.status, previous, error: w.lastError?.message },
        'printer status changed',
      );
      if (w.tenantId === undefined || !deps.onStatus) return;
      deps.onStatus({
        tenantId: w.tenantId,
        printer: w.printer,
        status: w.status,
        previous,
        sinceMs: w.sinceMs!,
        lastError: w.lastError,
        queueDepth: deps.repo.queueStats(w.tenantId, w.name).depth,
      });
    },
  };
  const open = deps.openDevice ?? openPrinterDevice;
  for (const p of deps.printers) workers.set(p.name, new PrinterWorker(p, open(p, options.statusTimeoutMs), ctx));

  /** A printer belongs to the tenant of its venue; until the venue is provisioned it prints nothing. */
  function resolveTenants(): void {
    for (const w of workers.values()) {
      if (w.tenantId !== undefined) continue;
      const tenants = deps.repo.venueTenants(w.printer.venue);
      if (tenants.length === 1) w.tenantId = tenants[0];
      else if (!warned.has(w.name)) {
        warned.add(w.name);
        deps.log.warn(
          { printer: w.name, venue: w.printer.venue, tenants: tenants.length },
          tenants.length === 0 ? 'printer names an unknown venue: it prints nothing' : 'printer venue is ambiguous',
        );
      }
    }
  }

  /** Old kitchen tickets expire even while their printer is down, so staff see them at once. */
  function sweep(): void {
    resolveTenants();
    const now = deps.now();
    for (const w of workers.values()) {
      if (w.tenantId === undefined || w.abandoned) continue;
      const expired = deps.repo.expireOlderThan(w.tenantId, w.name, now - kitchenMaxAgeMs, [...inFlight], now);
      if (expired.length > 0) deps.log.warn({ printer: w.name, jobs: expired }, 'kitchen tickets expired unprinted');
    }
  }

  return {
    /** Starts the workers (after the command queue's drain at start, so they see every job). */
    start(): void {
      resolveTenants();
      if (deps.tookOver) {
        const ids = deps.repo.failSentByAnother(deps.now(), SENT_BY_ANOTHER);
        if (ids.length > 0)
          deps.log.warn(
            { jobs: ids },
            'tickets the old primary was printing are not printed again: reprint if missing',
          );
      }
      sweepTimer = setInterval(() => {
        try {
          sweep();
        } catch (err) {
          deps.log.error({ err }, 'print job sweep failed');
        }
      }, deps.sweepMs ?? 1000);
      sweepTimer.unref();
      for (const w of workers.values()) w.start();
    },

    /** Jobs were committed: idle workers look at once. */
    wake(): void {
      for (const w of workers.values()) w.wake();
    },

    statusOf(name: string): PrinterState {
      const w = workers.get(name);
      if (!w) return { status: 'unknown', sinceMs: null, lastError: null, divertedTo: null };
      return {
        status: w.status,
        sinceMs: w.sinceMs,
        lastError: w.lastError,
        divertedTo: isDiverted(w, deps.now()) ? w.printer.backup! : null,
      };
    },

    /**
     * Stops every worker after its current job. A write still in flight after `graceMs` is abandoned: its
     * port is closed and the job stays queued (printed again at the next start, at least once).
     */
    async stop(graceMs = 2000): Promise<void> {
      clearInterval(sweepTimer);
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([Promise.all([...workers.values()].map((w) => w.stop())), grace]);
      clearTimeout(timer);
      for (const w of workers.values()) {
        w.abandoned = true;
        w.device.close();
      }
    },
  };
}
export type Spooler = ReturnType<typeof createSpooler>;
