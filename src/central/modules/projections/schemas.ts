import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { UUID_PATTERN } from '../../../shared/ids.js';
import { MAX_QTY_MICRO } from '../../../shared/qty.js';

/**
 * What the central accepts of an event, per kind (src/shared/sync-protocol.ts declares the types). An event
 * failing these is a dead letter, never a refused batch: the box cannot fix an event it already committed.
 */
const Id = Type.String({ minLength: 1, maxLength: 64 });

export const Envelope = Type.Object({
  eventId: Type.String({ pattern: UUID_PATTERN }),
  tenant: Id,
  stream: Type.String(),
  aggregate: Type.String({ maxLength: 200 }),
  kind: Type.String(),
  schema: Type.Integer({ minimum: 1 }),
  boxTime: Type.String(),
  body: Type.Unknown(),
});

export const OrderChanged = Type.Object({
  version: Type.Integer({ minimum: 1 }),
  command: Type.Object({
    correlationId: Type.String(), kind: Type.String(), userId: Type.String(), staff: Type.Boolean(), confirmedAt: Type.String(),
  }),
  order: Type.Object({
    id: Id, tenant: Id, status: Type.String({ minLength: 1 }), created: Type.String({ minLength: 1 }),
    buckets: Type.Array(Type.Object({ venue: Id }), { minItems: 1 }),
  }),
  detail: Type.Object({}),
});

// A delta is a box quantity: the box never books more than MAX_QTY_MICRO in one row (src/shared/qty.ts).
const Delta = Type.Integer({ minimum: -MAX_QTY_MICRO, maximum: MAX_QTY_MICRO });
const LedgerTuple = Type.Tuple([Id, Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 }), Id, Type.String({ minLength: 1 }), Delta]);

export const StockDocument = Type.Object({
  document: Type.Object({
    id: Id, kind: Type.String({ minLength: 1 }), warehouse: Id, number: Type.String({ minLength: 1 }),
    targetWarehouse: Type.Optional(Id), created: Type.Optional(Type.String()),
  }),
  ledger: Type.Array(LedgerTuple),
});

export const WarehouseChanged = Type.Object({ id: Id, name: Type.String({ minLength: 1 }) });

export const SoldOutChanged = Type.Object({
  venue: Id, menu: Type.String(), productId: Type.String({ minLength: 1 }), locked: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()]),
});

export const InboxResult = Type.Object({
  entry: Id, kind: Type.Union([Type.Literal('document'), Type.Literal('order')]),
  status: Type.Union([Type.Literal('applied'), Type.Literal('rejected')]),
  codes: Type.Array(Type.Object({ code: Type.String({ maxLength: 100 }), message: Type.String({ maxLength: 2000 }), args: Type.Array(Type.String()) }),
    { maxItems: 100 }),
});

export const checks = {
  envelope: TypeCompiler.Compile(Envelope),
  'order.changed': TypeCompiler.Compile(OrderChanged),
  'stock.document': TypeCompiler.Compile(StockDocument),
  'warehouse.changed': TypeCompiler.Compile(WarehouseChanged),
  'soldout.changed': TypeCompiler.Compile(SoldOutChanged),
  'inbox.result': TypeCompiler.Compile(InboxResult),
};

/** The first failure of a compiled check as one short line for the dead letter's reason. */
export function problemOf(check: (typeof checks)[keyof typeof checks], value: unknown): string | undefined {
  if (check.Check(value)) return undefined;
  const e = check.Errors(value).First();
  return `${e?.path || '/'}: ${e?.message ?? 'invalid'}`;
}
