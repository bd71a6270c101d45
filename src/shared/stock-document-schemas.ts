/**
 * Stock documents as the box validates them (docs/warehouse.md "The warehouse"): one file for the box's warehouse API and
 * for documents headquarters writes at the central for a venue's box (docs/sync.md "Documents from headquarters").
 */
import { type Static, Type } from '@sinclair/typebox';
import { AppError, type ErrorCode, type ErrorDetail, isNonEmpty } from './errors.js';
import { MAX_QTY, QtyError, toMicro } from './qty.js';
import { ItemId, MAX_ITEMS, StringMap, Uuid } from './types.js';
import { compile, fieldProblem, MAX_REPORTED, validationError } from './validate.js';

/** Document kinds by path segment (docs/warehouse.md "Warehouse API"). */
export const KINDS = { pz: 'PZ', wz: 'WZ', rw: 'RW', mm: 'MM', inventory: 'Inventory' } as const;
export type DocumentKind = (typeof KINDS)[keyof typeof KINDS];
export const kindOf = (segment: string): DocumentKind | undefined =>
  Object.hasOwn(KINDS, segment.toLowerCase()) ? KINDS[segment.toLowerCase() as keyof typeof KINDS] : undefined;

export const Unit = Type.String({ minLength: 1, maxLength: 32 });
export const PositiveQty = Type.Number({ exclusiveMinimum: 0, maximum: MAX_QTY });
/**
 * A document line's quantity. One body schema serves every kind (the kind is in the path), so it says what the
 * box accepts of any: 0 and up, and a rule of the kind (documentInput) refuses 0 on every kind but an Inventory,
 * whose lines are counted quantities (docs/warehouse.md "The warehouse").
 */
const DocumentQty = Type.Number({
  minimum: 0,
  maximum: MAX_QTY,
  description: 'more than 0; 0 only on an Inventory (a counted quantity)',
});

const DocumentItem = Type.Object({
  id: ItemId,
  unit: Unit,
  qty: DocumentQty,
  unitPrice: Type.Optional(Type.Number()),
  total: Type.Optional(Type.Number()),
  cat: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 32 })),
  extra: Type.Optional(StringMap),
});

/** A stock document's body, of any kind (the route's one schema: it validates and documents). */
export const DocumentBody = Type.Object({
  number: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\u0000-\\u001f]+$' })),
  items: Type.Array(DocumentItem, { maxItems: MAX_ITEMS }),
  unlockItems: Type.Optional(Type.Boolean()),
  extra: Type.Optional(StringMap),
  targetWarehouse: Type.Optional(Uuid),
});
export type DocumentBody = Static<typeof DocumentBody>;
export type DocumentItem = DocumentBody['items'][number];

/** A document as the service receives it: the items as given (stored and returned) and their micro-units. */
export interface DocumentInput {
  kind: DocumentKind;
  number?: string;
  items: DocumentItem[];
  qtyMicro: number[];
  unlockItems: boolean;
  extra: Record<string, string>;
  targetWarehouse?: string;
  /** The document's id when its writer chose it (a document from headquarters); absent: the box makes one. */
  id?: string;
  /**
   * An MM from headquarters out of a warehouse this box does not keep (the central warehouse): the box books the
   * receipt into the target only; the source's stock is headquarters' (docs/sync.md "Documents from headquarters").
   */
  sourceElsewhere?: boolean;
}

const validateDocument = compile(DocumentBody);

/** Converts quantities to micro-units; every quantity with more than 6 decimals is a 400 naming its field. */
export function micros(values: { path: string; qty: number }[]): number[] {
  const codes: ErrorDetail<ErrorCode>[] = [];
  const out = values.map(({ path, qty }) => {
    try {
      return toMicro(qty);
    } catch (err) {
      if (!(err instanceof QtyError)) throw err;
      if (codes.length < MAX_REPORTED) codes.push(fieldProblem(path, err.message));
      return 0;
    }
  });
  if (isNonEmpty(codes)) throw validationError(codes);
  return out;
}

export const fieldError = (path: string, message: string): AppError =>
  AppError.ofAll(message, [fieldProblem(path, message)]);

/** The Item fields (docs/warehouse.md: `id, unit, qty, unitPrice, total, cat, extra`), in their order; anything else a client sends is not stored. */
const knownItemFields = (it: DocumentItem): DocumentItem => ({
  id: it.id,
  unit: it.unit,
  qty: it.qty,
  ...(it.unitPrice !== undefined ? { unitPrice: it.unitPrice } : {}),
  ...(it.total !== undefined ? { total: it.total } : {}),
  ...(it.cat !== undefined ? { cat: it.cat } : {}),
  ...(it.extra !== undefined ? { extra: it.extra } : {}),
});

/** A document body of `kind`, checked (a 400 naming the field) and converted to micro-units. */
export const parseDocument = (kind: DocumentKind, body: unknown): DocumentInput =>
  documentInput(kind, validateDocument(body));

/** A document body already checked by DocumentBody: the rules of its kind (a 400 naming the field), in micro-units. */
export function documentInput(kind: DocumentKind, doc: DocumentBody): DocumentInput {
  if (kind !== 'Inventory') {
    const zero = doc.items
      .flatMap((it, i) =>
        it.qty === 0 ? [fieldProblem(`/items/${i}/qty`, 'Expected number to be greater than 0')] : [],
      )
      .slice(0, MAX_REPORTED);
    if (isNonEmpty(zero)) throw validationError(zero);
  }
  if (kind === 'MM' && doc.targetWarehouse === undefined) {
    throw fieldError('/targetWarehouse', 'an MM document needs a targetWarehouse');
  }
  if (kind !== 'MM' && doc.targetWarehouse !== undefined) {
    throw fieldError('/targetWarehouse', 'only an MM document has a targetWarehouse');
  }
  if (kind === 'Inventory') {
    // A stocktake sets each item's counted quantity: an item counted on two lines would be ambiguous.
    const seen = new Set<string>();
    doc.items.forEach((it, i) => {
      if (seen.has(it.id)) throw fieldError(`/items/${i}/id`, `item ${it.id} is listed twice`);
      seen.add(it.id);
    });
  }
  return {
    kind,
    ...(doc.number !== undefined ? { number: doc.number } : {}),
    items: doc.items.map(knownItemFields),
    qtyMicro: micros(doc.items.map((it, i) => ({ path: `/items/${i}/qty`, qty: it.qty }))),
    unlockItems: doc.unlockItems ?? false,
    extra: doc.extra ?? {},
    ...(doc.targetWarehouse !== undefined ? { targetWarehouse: doc.targetWarehouse } : {}),
  };
}
