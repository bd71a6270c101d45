import { type Static, Type } from '@sinclair/typebox';
import { createScanner } from 'jsonc-parser';
import { AppError, type ErrorCode, type ErrorDetail, isNonEmpty } from '../../shared/errors.js';
import { MAX_QTY, QtyError, toMicro } from '../../shared/qty.js';
import { ItemId, MAX_ITEMS, StringMap, Uuid } from '../../shared/types.js';
import { compile, fieldProblem, MAX_REPORTED, validationError } from '../../shared/validate.js';

/** Document kinds by path segment (README "The warehouse: stock documents, current stock and locks"). */
export const KINDS = { pz: 'PZ', wz: 'WZ', rw: 'RW', mm: 'MM', inventory: 'Inventory' } as const;
export type DocumentKind = (typeof KINDS)[keyof typeof KINDS];
export const kindOf = (segment: string): DocumentKind | undefined =>
  Object.hasOwn(KINDS, segment.toLowerCase()) ? KINDS[segment.toLowerCase() as keyof typeof KINDS] : undefined;

const INT32_MAX = 2_147_483_647;
const Unit = Type.String({ minLength: 1, maxLength: 32 });
const PositiveQty = Type.Number({ exclusiveMinimum: 0, maximum: MAX_QTY });
const CountedQty = Type.Number({ minimum: 0, maximum: MAX_QTY });
const Packets = Type.Integer({ minimum: 1, maximum: INT32_MAX });

export const WarehouseBody = Type.Object({ id: Uuid, name: Type.String({ minLength: 1, maxLength: 200 }) });
export type WarehouseBody = Static<typeof WarehouseBody>;

const item = <Q extends typeof PositiveQty | typeof CountedQty>(qty: Q) =>
  Type.Object({
    id: ItemId,
    unit: Unit,
    qty,
    unitPrice: Type.Optional(Type.Number()),
    total: Type.Optional(Type.Number()),
    cat: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 32 })),
    extra: Type.Optional(StringMap),
  });

const documentBody = <Q extends typeof PositiveQty | typeof CountedQty>(qty: Q) =>
  Type.Object({
    number: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\u0000-\\u001f]+$' })),
    items: Type.Array(item(qty), { maxItems: MAX_ITEMS }),
    unlockItems: Type.Optional(Type.Boolean()),
    extra: Type.Optional(StringMap),
    targetWarehouse: Type.Optional(Uuid),
  });
/** A stock document's body (an Inventory's quantities may also be 0). */
export const IssueBody = documentBody(PositiveQty);
const InventoryBody = documentBody(CountedQty);
export type DocumentItem = Static<typeof IssueBody>['items'][number];

export const StockQuery = Type.Object({ items: Type.Array(ItemId, { maxItems: MAX_ITEMS }) });
const ItemLock = Type.Object({ id: ItemId, unit: Unit, qty: PositiveQty });
export const LockBody = Type.Object({ qty: Packets, items: Type.Array(ItemLock, { maxItems: MAX_ITEMS }) });
const Packet = Type.Object({ qty: Packets, items: Type.Array(ItemLock, { maxItems: MAX_ITEMS }) });
export const PacketsBody = Type.Object({
  packets: Type.Record(Type.String(), Packet, { maxProperties: MAX_ITEMS }),
});
export const ReleaseBody = Type.Object({ items: Type.Optional(Type.Array(ItemId, { maxItems: MAX_ITEMS })) });

/** Who acts: the token's tenant and user (the routes check x-tenant and x-user against them). */
export interface Actor {
  tenantId: string;
  userId: string;
}

/** A document as the service receives it: the items as given (stored and returned) and their micro-units. */
export interface DocumentInput {
  kind: DocumentKind;
  number?: string;
  items: DocumentItem[];
  qtyMicro: number[];
  unlockItems: boolean;
  extra: Record<string, string>;
  targetWarehouse?: string;
}

export interface LockLine {
  id: string;
  unit: string;
  qtyMicro: number;
}

export interface PacketInput {
  name: string;
  qty: number;
  items: LockLine[];
}

const validateIssue = compile(IssueBody);
const validateInventory = compile(InventoryBody);
export const validateWarehouse = compile(WarehouseBody);
export const validateStockQuery = compile(StockQuery);
const validateLock = compile(LockBody);
const validatePackets = compile(PacketsBody);
export const validateRelease = compile(ReleaseBody);

/** Converts quantities to micro-units; every quantity with more than 6 decimals is a 400 naming its field. */
function micros(values: { path: string; qty: number }[]): number[] {
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

const fieldError = (path: string, message: string): AppError => AppError.ofAll(message, [fieldProblem(path, message)]);

/** The Item fields (README "The warehouse": `id, unit, qty, unitPrice, total, cat, extra`), in their order; anything else a client sends is not stored. */
const knownItemFields = (it: DocumentItem): DocumentItem => ({
  id: it.id, unit: it.unit, qty: it.qty,
  ...(it.unitPrice !== undefined ? { unitPrice: it.unitPrice } : {}),
  ...(it.total !== undefined ? { total: it.total } : {}),
  ...(it.cat !== undefined ? { cat: it.cat } : {}),
  ...(it.extra !== undefined ? { extra: it.extra } : {}),
});

export function parseDocument(kind: DocumentKind, body: unknown): DocumentInput {
  const doc = kind === 'Inventory' ? validateInventory(body) : validateIssue(body);
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

const lockLines = (items: Static<typeof ItemLock>[], path: string): LockLine[] => {
  const q = micros(items.map((it, i) => ({ path: `${path}/${i}/qty`, qty: it.qty })));
  return items.map((it, i) => ({ id: it.id, unit: it.unit, qtyMicro: q[i]! }));
};

export function parseLock(body: unknown): { packets: number; items: LockLine[] } {
  const lock = validateLock(body);
  return { packets: lock.qty, items: lockLines(lock.items, '/items') };
}

const pointerPart = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Packets in body order. `raw` is the body text: JSON.parse puts integer-like keys ("1", "2") first. */
export function parsePackets(body: unknown, raw: string): PacketInput[] {
  const { packets } = validatePackets(body);
  const names = Object.keys(packets);
  for (const name of names) {
    if (name.length === 0 || name.length > 100) {
      throw fieldError(`/packets/${pointerPart(name)}`, 'a packet name has 1 to 100 characters');
    }
  }
  return bodyOrder(names, raw).map((name) => ({
    name,
    qty: packets[name]!.qty,
    items: lockLines(packets[name]!.items, `/packets/${pointerPart(name)}/items`),
  }));
}

// Token kinds of jsonc-parser's scanner (its SyntaxKind is an ambient const enum, unusable with isolatedModules).
const OPEN_BRACE = 1;
const CLOSE_BRACE = 2;
const OPEN_BRACKET = 3;
const CLOSE_BRACKET = 4;
const COMMA = 5;
const STRING = 10;
const EOF = 17;

/**
 * The packet names in the order of the body text. A token scan, not a parse tree: a recursive parser overflows
 * its stack on a deeply nested field elsewhere in the body (a 500). And JSON.parse keeps the last of repeated
 * top-level "packets" keys, so the order comes from that one too.
 */
function bodyOrder(names: string[], raw: string): string[] {
  if (!names.some((n) => /^(0|[1-9]\d*)$/.test(n))) return names;
  const scanner = createScanner(raw, true);
  const open: number[] = []; // the braces and brackets around the current token
  let expectKey = false;
  let rootKey: string | undefined;
  let current: string[] | undefined;
  let found: string[] = [];
  for (let token = scanner.scan(); token !== EOF; token = scanner.scan()) {
    if (token === OPEN_BRACE || token === OPEN_BRACKET) {
      if (token === OPEN_BRACE && open.length === 1 && rootKey === 'packets') current = [];
      open.push(token);
      expectKey = token === OPEN_BRACE;
    } else if (token === CLOSE_BRACE || token === CLOSE_BRACKET) {
      open.pop();
      if (open.length === 1 && current) [found, current] = [current, undefined];
      expectKey = false;
    } else if (token === COMMA) {
      expectKey = open.at(-1) === OPEN_BRACE;
    } else if (token === STRING && expectKey) {
      if (open.length === 1) rootKey = scanner.getTokenValue();
      else if (open.length === 2 && current) current.push(scanner.getTokenValue());
      expectKey = false;
    }
  }
  const ordered = [...new Set(found)];
  const known = new Set(names);
  // Never a name JSON.parse did not keep, never one left out.
  return ordered.length === names.length && ordered.every((n) => known.has(n)) ? ordered : names;
}
