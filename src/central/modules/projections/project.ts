import {
  type Envelope,
  ENVELOPE_KINDS,
  type EnvelopeKind,
  type InboxResultBody,
  type OrderChangedBody,
  problemOf,
  type SoldOutChangedBody,
  type StockDocumentBody,
  SYNC_CHECKS,
  type WarehouseChangedBody,
} from '../../../shared/sync-messages.js';
import type { Queryable } from '../../db/pool.js';
import { type BoxClock, centralInstant } from '../devices/box-clock.js';
import { createInboxRepo } from '../inbox/repo.js';
import { refreshFacts } from './facts.js';
import { createProjectionRepo, type PendingOrder, type Source } from './repo.js';

/** An event that breaks a rule: the ingest keeps it as a dead letter with this reason and moves on. */
export class RuleBroken extends Error {}

const fail = (reason: string): never => {
  throw new RuleBroken(reason);
};

export interface ParsedEvent {
  eventId: string;
  kind: EnvelopeKind;
  body: unknown;
}

/** What `readEnvelope` gives for a text that is not JSON. */
export const NOT_JSON: unique symbol = Symbol('not JSON');

/** An envelope's text parsed once, for both the raw event's columns and `checkEvent`; NOT_JSON when it is not JSON. */
export function readEnvelope(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/**
 * Checks one envelope's text against the rules every event must keep, with the protocol's own schemas
 * (src/shared/sync-messages.ts); returns what the projection needs. An event failing them is a dead letter, never
 * a refused batch: the box cannot fix an event it already committed.
 * `tenant` is the device's: an event naming another tenant is never projected.
 */
export function parseEvent(text: string, tenant: string): ParsedEvent {
  return checkEvent(readEnvelope(text), tenant);
}

/** `parseEvent` of an envelope parsed already (`readEnvelope`). */
export function checkEvent(value: unknown, tenant: string): ParsedEvent {
  if (value === NOT_JSON) return fail('not JSON');
  const kindOf = (value as { kind?: unknown } | null)?.kind;
  if (typeof kindOf === 'string' && !Object.hasOwn(ENVELOPE_KINDS, kindOf))
    fail(`unknown kind ${kindOf.slice(0, 100)}`);
  const problem = problemOf(SYNC_CHECKS.envelope, value);
  if (problem) fail(`envelope ${problem}`);
  const e = value as Envelope;
  const kind = e.kind;
  if (e.stream !== ENVELOPE_KINDS[kind]) fail(`stream ${e.stream} is not the stream of ${kind}`);
  if (e.tenant !== tenant) fail(`envelope tenant ${e.tenant} is not the device's tenant`);
  const bodyProblem = problemOf(SYNC_CHECKS.body[kind], e.body);
  if (bodyProblem) fail(`body ${bodyProblem}`);
  return { eventId: e.eventId, kind, body: e.body };
}

/**
 * An instant the box wrote, on the central's clock (devices/box-clock.ts): a wrong clock is never a reason to set
 * an event aside (docs/sync.md "Clocks"), a text that is no date is. Without a clock (a test projecting alone),
 * the box is taken as right and the event as received now.
 */
const dateOf = (text: string, what: string, clock: BoxClock | undefined): Date => {
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) fail(`${what} is not a date: ${String(text).slice(0, 100)}`);
  return centralInstant(ms, clock ?? { offsetMs: null, receivedMs: Date.now() });
};

/** The command's confirmedAt for the report facts, moved like dateOf; a text that is no date stays (it reads as none). */
const confirmedOf = (text: string, clock: BoxClock | undefined): string =>
  Number.isFinite(Date.parse(text)) ? dateOf(text, 'command.confirmedAt', clock).toISOString() : text;

/** Where an event comes from, and what the central knows of its device's clock when it projects it. */
export type ProjectionSource = Source & { clock?: BoxClock };

/** The CHECK of migration 2: a balance past +-Number.MAX_SAFE_INTEGER micro-units could not be read back exactly. */
const BALANCE_CHECK = 'stock_balances_qty_safe';

/** Venues and warehouses a batch has found to be the tenant's: each is looked up once per batch. */
export interface KnownIds {
  venues: Set<string>;
  warehouses: Set<string>;
}
export const noneKnown = (): KnownIds => ({ venues: new Set(), warehouses: new Set() });

/**
 * Applies one checked event to the central's tables (the caller holds a savepoint around it). With `orders`
 * given, an order.changed event is checked and kept there for its batch's one upsert (`flushOrders`) instead.
 */
export async function projectEvent(
  db: Queryable,
  source: ProjectionSource,
  event: ParsedEvent,
  known: KnownIds = noneKnown(),
  orders?: PendingOrder[],
): Promise<void> {
  const repo = createProjectionRepo(db);
  const { tenantId } = source;
  const venuesKnown = async (ids: string[]) => {
    const missing = ids.filter((id) => !known.venues.has(id));
    if (missing.length > 0 && (await repo.countVenues(tenantId, missing)) !== missing.length) return false;
    for (const id of missing) known.venues.add(id);
    return true;
  };
  const warehousesKnown = async (ids: string[]) => {
    const missing = ids.filter((id) => !known.warehouses.has(id));
    if (missing.length > 0 && (await repo.countWarehouses(tenantId, missing)) !== missing.length) return false;
    for (const id of missing) known.warehouses.add(id);
    return true;
  };
  switch (event.kind) {
    case 'order.changed': {
      const b = event.body as OrderChangedBody;
      if (b.order.tenant !== tenantId) fail(`order tenant ${b.order.tenant} is not the device's tenant`);
      // Any venue of the device's tenant, not only the venue it was enrolled for: one box may serve several
      // venues of its tenant (a food court, a shared kitchen), and the box is the system of record for what
      // happens there (docs/sync.md "Sync to the central node"). What a device cannot do is write for another tenant, or take over an order
      // another device sent (below).
      const venueIds = [...new Set(b.order.buckets.map((x) => x.venue))];
      if (!(await venuesKnown(venueIds))) fail(`order names a venue that is not the tenant's`);
      const createdAt = dateOf(b.order.created, 'order.created', source.clock);
      const confirmedAt = confirmedOf(b.command.confirmedAt, source.clock);
      if (orders) {
        orders.push({
          id: b.order.id,
          seq: source.seq,
          version: b.version,
          status: b.order.status,
          venueIds,
          createdAt,
          confirmedAt,
          contact: b.detail.contact,
        });
        return;
      }
      const orderJson = JSON.stringify(b.order);
      // An order belongs to the device that first sent it (each kind of data has one writer): another device
      // sending the same id, by mistake or on purpose, must not turn it back to an older version.
      const { written, owner } = await repo.upsertOrder(source, {
        id: b.order.id,
        version: b.version,
        status: b.order.status,
        venueIds,
        createdAt,
        json: orderJson,
      });
      if (owner !== undefined) fail(`order belongs to device ${owner}`);
      await repo.insertOrderVersion(source, b.order.id, b.version, orderJson, JSON.stringify(b.command));
      // Facts follow the orders row: an older event that did not replace it changes none.
      if (written)
        await refreshFacts(db, tenantId, [
          {
            id: b.order.id,
            seq: source.seq,
            status: b.order.status,
            confirmedAt,
            contact: b.detail.contact,
          },
        ]);
      return;
    }
    case 'stock.document': {
      const b = event.body as StockDocumentBody;
      const d = b.document;
      const named = [
        ...new Set([d.warehouse, ...(d.targetWarehouse ? [d.targetWarehouse] : []), ...b.ledger.map((r) => r[0])]),
      ];
      if (!(await warehousesKnown(named))) fail('stock document names a warehouse the central does not know');
      const created = dateOf(d.created, 'document.created', source.clock);
      const inserted = await repo.insertDocument(source, {
        id: d.id,
        warehouse: d.warehouse,
        target: d.targetWarehouse ?? null,
        kind: d.kind,
        number: d.number,
        createdAt: created,
        json: JSON.stringify(d),
      });
      if (inserted) {
        try {
          await repo.bookLedger(tenantId, d.id, b.ledger);
        } catch (err) {
          if ((err as { constraint?: string }).constraint === BALANCE_CHECK)
            fail('a stock balance would pass +-9007199254740991 micro-units');
          throw err;
        }
      }
      return;
    }
    case 'warehouse.changed': {
      const b = event.body as WarehouseChangedBody;
      await repo.upsertWarehouse(tenantId, b.id, b.name);
      known.warehouses.add(b.id);
      return;
    }
    case 'soldout.changed': {
      const b = event.body as SoldOutChangedBody;
      if (!(await venuesKnown([b.venue]))) fail(`sold out names a venue that is not the tenant's`);
      if (b.locked) await repo.setSoldOut(source, b);
      else await repo.clearSoldOut(tenantId, b.venue, b.productId);
      return;
    }
    case 'inbox.result': {
      // A box applied or refused what headquarters sent it (docs/sync.md "Orders created at the central").
      const b = event.body as InboxResultBody;
      if (!(await createInboxRepo(db).recordResult(tenantId, source.deviceId, b.entry, b.status, b.codes))) {
        fail(`inbox entry ${b.entry} is not the central's`);
      }
      return;
    }
  }
}

/**
 * The batch's kept order events in one go, then their report facts; an order another device owns breaks a rule
 * (the caller goes slow). Their envelopes must be stored already (sync_events, this hour): the order and command
 * JSON are taken from there.
 */
export async function flushOrders(
  db: Queryable,
  tenantId: string,
  deviceId: string,
  orders: PendingOrder[],
): Promise<void> {
  if (orders.length === 0) return;
  const { written, foreign } = await createProjectionRepo(db).projectOrders(tenantId, deviceId, orders);
  if (foreign.length > 0) fail(`order ${foreign[0]} belongs to another device`);
  await refreshFacts(
    db,
    tenantId,
    orders.filter((o) => written.has(o.id)),
  );
}
