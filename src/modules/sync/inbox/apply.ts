import { createHash } from 'node:crypto';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Logger } from '../../../log.js';
import { AppError, type ErrorDetail } from '../../../shared/errors.js';
import { CENTRAL_SOURCE, HqDocumentHead, HqOrderBody, type InboxEntry } from '../../../shared/hq-inbox.js';
import type { InboxResultBody } from '../../../shared/sync-messages.js';
import { newId7 } from '../../../shared/ids.js';
import { type DocumentInput, parseDocument } from '../../../shared/stock-document-schemas.js';
import type { Command } from '../../ordering/repo.js';

const checkHead = TypeCompiler.Compile(HqDocumentHead);
const checkOrder = TypeCompiler.Compile(HqOrderBody);

export interface InboxDeps {
  /** Runs `fn` in a savepoint of the applying transaction: an entry that is refused rolls back alone. */
  savepoint<T>(fn: () => T): T;
  /** The venue's warehouse on this box (an MM from another warehouse into it books without that one's stock). */
  venueWarehouse(tenantId: string, venueId: string): string | undefined;
  /** Whether a document with this id is booked here already (warehouse module). */
  documentKnown(tenantId: string, id: string): boolean;
  /** Books the document (the warehouse module's postDocument: its rules, its outbox event). Throws AppError when refused. */
  bookDocument(tenantId: string, userId: string, warehouseId: string, doc: DocumentInput): void;
  /** Whether an order with this id exists here (ordering module). */
  orderKnown(tenantId: string, id: string): boolean;
  /** Puts a command into the ordering queue's table (processed after COMMIT, like any confirmed command). */
  queueCommand(cmd: Command): void;
  /** Appends the `inbox.result` event (src/shared/hq-inbox.ts) to the outbox. */
  report(tenantId: string, body: InboxResultBody, nowMs: number): void;
  now(): number;
  log: Logger;
}

/** The user an order created at the central names as its creator on the box: one per tenant, derived from it. */
export function centralUserId(tenantId: string): string {
  const h = createHash('sha256').update(`central\0${tenantId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The correlation id of a central order's `submit`, derived from its id: delivered twice, it is the same row. */
export function submitCorrelationId(orderId: string): string {
  const h = createHash('sha256').update(`submit\0${orderId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const isUniqueViolation = (err: unknown): boolean => (err as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE';
const isEnvironmental = (err: unknown): boolean => {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') && !code.startsWith('SQLITE_CONSTRAINT');
};

const invalid = (message: string, path: string): ErrorDetail[] => [{ code: 'invalidField', message, args: [path] }];

/**
 * Applies headquarters' entries (docs/sync.md "Documents from headquarters", "Orders created at the central") inside
 * the transaction that moves the box's cursor past them, so an entry is applied exactly when the cursor passes
 * it. Each is applied once by its id, however often it arrives: a document whose id is booked, or an order
 * whose id exists (or whose `new` is queued), is skipped. A document is booked at once with the box's rules; a
 * refused one is reported up (`inbox.result` rejected, with the codes the warehouse API would answer). An order
 * becomes a `new` (and `submit`) in the command queue, processed after COMMIT like any confirmed command; the
 * queue's outcome is reported by reportCentralOrders. Returns how many entries were new here.
 */
export function applyInbox(deps: InboxDeps, tenantId: string, entries: InboxEntry[]): number {
  let applied = 0;
  for (const entry of entries) {
    if (entry.kind === 'document') applied += applyDocument(deps, tenantId, entry) ? 1 : 0;
    else if (entry.kind === 'order') applied += applyOrder(deps, tenantId, entry) ? 1 : 0;
  }
  return applied;
}

function applyDocument(deps: InboxDeps, tenantId: string, entry: InboxEntry): boolean {
  if (deps.documentKnown(tenantId, entry.id)) return false;
  const now = deps.now();
  const result = (status: InboxResultBody['status'], codes: ErrorDetail[]) =>
    deps.report(tenantId, { entry: entry.id, kind: 'document', status, codes }, now);
  if (!checkHead.Check(entry.body) || entry.body.id !== entry.id) {
    result('rejected', invalid('the document from headquarters is not one this box reads', '/'));
    return true;
  }
  const head = entry.body as HqDocumentHead;
  try {
    deps.savepoint(() => {
      const doc = parseDocument(head.kind, entry.body);
      const into = deps.venueWarehouse(tenantId, entry.venue);
      deps.bookDocument(tenantId, entry.createdBy, head.warehouse, {
        ...doc,
        id: entry.id,
        ...(head.kind === 'MM' && head.warehouse !== into ? { sourceElsewhere: true } : {}),
      });
      result('applied', []);
    });
  } catch (err) {
    if (isEnvironmental(err)) throw err;
    if (!(err instanceof AppError)) deps.log.error({ err, entry: entry.id }, 'a document from headquarters failed');
    // Any other failure is this document's: it is refused, and the entries after it still apply.
    result(
      'rejected',
      err instanceof AppError ? err.codes : [{ code: 'internal', message: 'internal error', args: [entry.id] }],
    );
  }
  return true;
}

function applyOrder(deps: InboxDeps, tenantId: string, entry: InboxEntry): boolean {
  if (deps.orderKnown(tenantId, entry.id)) return false;
  const now = deps.now();
  if (!checkOrder.Check(entry.body) || entry.body.id !== entry.id || entry.body.buckets.length !== 1) {
    deps.report(
      tenantId,
      {
        entry: entry.id,
        kind: 'order',
        status: 'rejected',
        codes: invalid('the order from headquarters is not one this box reads', '/'),
      },
      now,
    );
    return true;
  }
  const order = entry.body as HqOrderBody;
  const userId = centralUserId(tenantId);
  const base = { tenantId, userId, staff: true, orderId: entry.id, confirmedMs: now };
  const body = {
    orderType: order.orderType,
    buckets: order.buckets.map((b) => ({
      venue: b.venue,
      lines: (b.lines ?? []).map((l) => ({
        id: newId7(),
        productId: l.productId,
        quantity: l.quantity,
        ...(l.extra?.note ? { note: l.extra.note } : {}),
      })),
    })),
    ...(order.contact ? { contact: order.contact } : {}),
    extra: { ...order.extra, 'X-SOURCE': CENTRAL_SOURCE },
  };
  try {
    deps.savepoint(() => {
      deps.queueCommand({ ...base, correlationId: entry.id, kind: 'new', body });
      if (order.submit !== false)
        deps.queueCommand({ ...base, correlationId: submitCorrelationId(entry.id), kind: 'submit', body: {} });
    });
  } catch (err) {
    // Its `new` is in the queue already (delivered before, not yet processed or its order since removed).
    if (isUniqueViolation(err)) return false;
    throw err;
  }
  return true;
}
