import type { Principal } from '../../http/types.js';
import { isoOf } from '../../shared/clock.js';
import { AppError, invalidField, notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { formatMoney, parseMoney } from '../../shared/money.js';
import { type PrinterConfig, printerLocation, routeTicket } from './printers.js';
import type { PrintJob, PrintRepo } from './repo.js';
import type { JobQuery, JobTicket, JobView, PrinterView, ReprintBody } from './schemas.js';
import type { Spooler } from './spooler.js';

export interface PrintingDeps {
  repo: PrintRepo;
  printers: PrinterConfig[];
  /** Printer statuses and the wake after a reprint; without one (tools, tests) every status is 'unknown'. */
  spooler?: Pick<Spooler, 'statusOf' | 'wake'>;
  now(): number;
}

const NO_STATE = { status: 'unknown', sinceMs: null, lastError: null, divertedTo: null } as const;
const iso = (ms: number | null): string | null => (ms === null ? null : isoOf(ms));

/**
 * Print jobs as use cases: written (and routed to printers) inside the transaction of the command that causes
 * them, read by staff, reprinted. Printing itself is the spooler's.
 */
export function createPrintingService(deps: PrintingDeps) {
  const { repo } = deps;
  const byName = new Map(deps.printers.map((p) => [p.name, p]));

  /** The configured printers of the principal's tenant (a printer belongs to the tenant of its venue). */
  const printersOf = (tenantId: string): PrinterConfig[] =>
    deps.printers.filter((p) => repo.venueTenants(p.venue).includes(tenantId));

  function insertRouted(tenantId: string, ticket: JobTicket, nowMs: number): string[] {
    const printedBy = ticket.kind === 'cancel' ? repo.kitchenPrintersOf(tenantId, ticket.orderId) : [];
    const routes = routeTicket(deps.printers, ticket.venueId, ticket.kind, ticket.lines, printedBy);
    return routes.map((r) => {
      const id = newId();
      const share =
        r.lines.length === ticket.lines.length ? ticket : { ...ticket, lines: r.lines, total: sumOf(r.lines) };
      repo.insert({
        tenantId,
        id,
        venueId: ticket.venueId,
        orderId: ticket.orderId,
        kind: ticket.kind,
        round: ticket.round,
        printer: r.printer,
        ticket: share,
        copyOf: null,
        createdMs: nowMs,
      });
      return id;
    });
  }

  return {
    /**
     * Writes the jobs of one ticket of a command, routed to the venue's printers (printers.ts). Call inside the
     * command's transaction; the spooler picks the rows up once it commits.
     */
    enqueue: (tenantId: string, ticket: JobTicket, nowMs: number): string[] => insertRouted(tenantId, ticket, nowMs),

    listPrinters(p: Principal): PrinterView[] {
      const now = deps.now();
      return printersOf(p.tenantId).map((printer) => {
        const state = deps.spooler?.statusOf(printer.name) ?? NO_STATE;
        const { depth, oldestMs } = repo.queueStats(p.tenantId, printer.name);
        return {
          name: printer.name,
          venue: printer.venue,
          role: printer.role,
          path: printerLocation(printer),
          backup: printer.backup ?? null,
          categories: printer.categories ?? null,
          status: state.status,
          statusSince: iso(state.sinceMs),
          divertedTo: state.divertedTo,
          queueDepth: depth,
          oldestJobAgeMs: oldestMs === null ? null : Math.max(0, now - oldestMs),
          lastError: state.lastError && { ...state.lastError, at: isoOf(state.lastError.atMs) },
        };
      });
    },

    /** Every configured printer's status and queued jobs, whatever its tenant (the box's metrics). */
    printerHealth(): { name: string; status: PrinterView['status']; queueDepth: number }[] {
      return deps.printers.map((printer) => {
        const tenants = repo.venueTenants(printer.venue);
        const queueDepth = tenants.reduce((n, t) => n + repo.queueStats(t, printer.name).depth, 0);
        return { name: printer.name, status: (deps.spooler?.statusOf(printer.name) ?? NO_STATE).status, queueDepth };
      });
    },

    listJobs(p: Principal, query: JobQuery): JobView[] {
      if (query.printer !== undefined && !printersOf(p.tenantId).some((x) => x.name === query.printer)) {
        throw notFound('printer');
      }
      return repo.list(p.tenantId, query.printer, query.state, query.limit).map(jobView);
    },

    /**
     * A staff reprint: a new job with the same ticket, marked as a copy (COPY / KOPIA), on the named printer
     * or the original's, in its own transaction. A job that never had a printer goes to the venue's printer
     * for its kind; with none configured, 409.
     */
    reprint(p: Principal, jobId: string, body: ReprintBody): JobView {
      const original = repo.get(p.tenantId, jobId);
      if (!original) throw notFound('print job');
      const printer = targetOf(original, body.printer);
      const id = newId();
      repo.transaction(() =>
        repo.insert({
          tenantId: p.tenantId,
          id,
          venueId: original.venueId,
          orderId: original.orderId,
          kind: original.kind,
          round: original.round,
          printer,
          ticket: original.ticket,
          copyOf: original.id,
          createdMs: deps.now(),
        }),
      );
      deps.spooler?.wake();
      return jobView(repo.get(p.tenantId, id)!);
    },
  };

  function targetOf(job: PrintJob, wanted: string | undefined): string {
    if (wanted !== undefined) {
      const printer = byName.get(wanted);
      if (!printer || printer.venue !== job.venueId) {
        throw invalidField('/printer', `${wanted} is not a printer of the job's venue`);
      }
      return printer.name;
    }
    if (job.printer !== null && byName.has(job.printer)) return job.printer;
    const role = job.kind === 'claim' ? 'counter' : 'kitchen';
    const fallback = deps.printers.find((x) => x.venue === job.venueId && x.role === role);
    if (!fallback)
      throw AppError.of('conflict', `venue ${job.venueId} has no ${role} printer configured`, [job.venueId]);
    return fallback.name;
  }
}
export type PrintingService = ReturnType<typeof createPrintingService>;

const sumOf = (lines: { amount: string }[]): string => formatMoney(lines.reduce((s, l) => s + parseMoney(l.amount), 0));

function jobView(j: PrintJob): JobView {
  return {
    id: j.id,
    printer: j.printer,
    venue: j.venueId,
    orderId: j.orderId,
    kind: j.kind,
    round: j.round,
    state: j.state,
    copyOf: j.copyOf,
    attempts: j.attempts,
    lastError: j.lastError,
    printedOn: j.printedOn,
    created: isoOf(j.createdMs),
    done: iso(j.doneMs),
    ticket: j.ticket,
  };
}
