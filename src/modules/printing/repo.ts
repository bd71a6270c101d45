import { type Db, inTransaction } from '../../db/open.js';
import type { PrintKind } from './printers.js';
import type { JobState, JobTicket } from './schemas.js';

export interface PrintJob {
  tenantId: string;
  id: string;
  /** Insertion order: a printer's queue is printed in this order. */
  seq: number;
  venueId: string;
  orderId: string;
  kind: PrintKind;
  round: number;
  printer: string | null;
  ticket: JobTicket;
  state: JobState;
  copyOf: string | null;
  attempts: number;
  lastError: string | null;
  printedOn: string | null;
  createdMs: number;
  doneMs: number | null;
}

/** A job as written: its state follows from `printer` (insert), the rest is filled in as it is printed. */
export type NewPrintJob = Omit<PrintJob, 'seq' | 'state' | 'attempts' | 'lastError' | 'printedOn' | 'doneMs'>;

interface JobRow {
  tenant_id: string;
  id: string;
  seq: number;
  venue_id: string;
  order_id: string;
  kind: PrintKind;
  round: number;
  printer: string | null;
  payload_json: string;
  state: JobState;
  copy_of: string | null;
  attempts: number;
  last_error: string | null;
  printed_on: string | null;
  created_ms: number;
  done_ms: number | null;
}

const COLUMNS = 'rowid AS seq, *';

const toJob = (r: JobRow): PrintJob => ({
  tenantId: r.tenant_id,
  id: r.id,
  seq: r.seq,
  venueId: r.venue_id,
  orderId: r.order_id,
  kind: r.kind,
  round: r.round,
  printer: r.printer,
  ticket: JSON.parse(r.payload_json) as JobTicket,
  state: r.state,
  copyOf: r.copy_of,
  attempts: r.attempts,
  lastError: r.last_error,
  printedOn: r.printed_on,
  createdMs: r.created_ms,
  doneMs: r.done_ms,
});

/** SQL of print jobs. Every state change is conditional on the row still being 'queued'. */
export function createPrintRepo(db: Db) {
  const tx = inTransaction(db);
  const s = {
    insert: db.prepare(
      `INSERT INTO print_jobs (tenant_id, id, venue_id, order_id, kind, round, printer, payload_json, state, copy_of, created_ms)
       VALUES (@tenantId, @id, @venueId, @orderId, @kind, @round, @printer, @payloadJson, @state, @copyOf, @createdMs)`,
    ),
    kitchenPrinters: db.prepare<[string, string], { printer: string }>(
      `SELECT DISTINCT printer FROM print_jobs
       WHERE tenant_id = ? AND order_id = ? AND kind = 'kitchen' AND printer IS NOT NULL`,
    ),
    get: db.prepare<[string, string], JobRow>(`SELECT ${COLUMNS} FROM print_jobs WHERE tenant_id = ? AND id = ?`),
    head: db.prepare<[string, string], JobRow>(
      `SELECT ${COLUMNS} FROM print_jobs WHERE tenant_id = ? AND printer = ? AND state = 'queued' ORDER BY rowid LIMIT 1`,
    ),
    stats: db.prepare<[string, string], { depth: number; oldest: number | null }>(
      `SELECT COUNT(*) AS depth, MIN(created_ms) AS oldest FROM print_jobs
       WHERE tenant_id = ? AND printer = ? AND state = 'queued'`,
    ),
    printed: db.prepare(
      `UPDATE print_jobs SET state = 'printed', printed_on = ?, done_ms = ?, attempts = attempts + 1
       WHERE tenant_id = ? AND id = ? AND state = 'queued'`,
    ),
    attempt: db.prepare(
      `UPDATE print_jobs SET attempts = attempts + 1, last_error = ? WHERE tenant_id = ? AND id = ? AND state = 'queued'`,
    ),
    sending: db.prepare(`UPDATE print_jobs SET sending_ms = ? WHERE tenant_id = ? AND id = ? AND state = 'queued'`),
    failSending: db.prepare<[number, string], { id: string }>(
      `UPDATE print_jobs SET state = 'failed', done_ms = ?, last_error = ?
       WHERE state = 'queued' AND sending_ms IS NOT NULL RETURNING id`,
    ),
    finish: db.prepare(
      `UPDATE print_jobs SET state = ?, last_error = coalesce(?, last_error), done_ms = ?
       WHERE tenant_id = ? AND id = ? AND state = 'queued'`,
    ),
    expireOld: db.prepare<[number, string, string, number, string], { id: string }>(
      `UPDATE print_jobs SET state = 'expired', done_ms = ?
       WHERE tenant_id = ? AND printer = ? AND state = 'queued' AND kind = 'kitchen' AND created_ms < ?
         AND id NOT IN (SELECT value FROM json_each(?))
       RETURNING id`,
    ),
    list: db.prepare<[{ tenantId: string; printer: string | null; state: string | null; limit: number }], JobRow>(
      `SELECT ${COLUMNS} FROM print_jobs
       WHERE tenant_id = @tenantId AND (@printer IS NULL OR printer = @printer) AND (@state IS NULL OR state = @state)
       ORDER BY created_ms DESC, rowid DESC LIMIT +@limit`,
    ),
    // The configuration names venues, not tenants; a venue id is a UUID, unique across the box's tenants.
    venueTenants: db.prepare<[string], { tenant_id: string }>('SELECT tenant_id FROM venues WHERE id = ?'),
  };

  return {
    transaction: <T>(fn: () => T): T => tx.immediate(fn),
    insert(job: NewPrintJob): void {
      s.insert.run({
        ...job,
        payloadJson: JSON.stringify(job.ticket),
        state: job.printer === null ? 'unrouted' : 'queued',
      });
    },
    /** The printers that got kitchen tickets of the order (where its cancel slips go). */
    kitchenPrintersOf: (tenantId: string, orderId: string): string[] =>
      s.kitchenPrinters.all(tenantId, orderId).map((r) => r.printer),
    get(tenantId: string, id: string): PrintJob | undefined {
      const row = s.get.get(tenantId, id);
      return row && toJob(row);
    },
    /** The oldest queued job of a printer. */
    head(tenantId: string, printer: string): PrintJob | undefined {
      const row = s.head.get(tenantId, printer);
      return row && toJob(row);
    },
    isQueued: (tenantId: string, id: string): boolean => s.get.get(tenantId, id)?.state === 'queued',
    queueStats(tenantId: string, printer: string): { depth: number; oldestMs: number | null } {
      const row = s.stats.get(tenantId, printer)!;
      return { depth: row.depth, oldestMs: row.oldest };
    },
    /** True when this call recorded the print (the row was still queued). */
    markPrinted: (tenantId: string, id: string, printedOn: string, nowMs: number): boolean =>
      s.printed.run(printedOn, nowMs, tenantId, id).changes === 1,
    /** Before the first byte goes to the printer (src/db/migrations/0013-print-sending.ts). */
    markSending(tenantId: string, id: string, nowMs: number): void {
      s.sending.run(nowMs, tenantId, id);
    },
    /**
     * After a takeover: the queued jobs the dead primary had begun sending may have come out already; failed, with
     * a reason staff read, instead of printed twice. Returns their ids.
     */
    failSentByAnother: (nowMs: number, reason: string): string[] => s.failSending.all(nowMs, reason).map((r) => r.id),
    recordAttempt(tenantId: string, id: string, error: string): void {
      s.attempt.run(error, tenantId, id);
    },
    finish: (tenantId: string, id: string, state: 'expired' | 'failed', error: string | null, nowMs: number): boolean =>
      s.finish.run(state, error, nowMs, tenantId, id).changes === 1,
    /** Expires the printer's queued kitchen jobs written before `cutoffMs`, except those being printed. */
    expireOlderThan: (tenantId: string, printer: string, cutoffMs: number, busy: string[], nowMs: number): string[] =>
      s.expireOld.all(nowMs, tenantId, printer, cutoffMs, JSON.stringify(busy)).map((r) => r.id),
    list: (tenantId: string, printer: string | undefined, state: string | undefined, limit: number): PrintJob[] =>
      s.list.all({ tenantId, printer: printer ?? null, state: state ?? null, limit }).map(toJob),
    venueTenants: (venueId: string): string[] => s.venueTenants.all(venueId).map((r) => r.tenant_id),
  };
}
export type PrintRepo = ReturnType<typeof createPrintRepo>;
