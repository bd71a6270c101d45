import { type Static, Type } from '@sinclair/typebox';
import { createScanner } from 'jsonc-parser';
import { ItemId, MAX_ITEMS, Uuid } from '../../shared/types.js';
import { fieldError, micros, PositiveQty, Unit } from '../../shared/stock-document-schemas.js';

// Documents are validated by one shared file: the central checks headquarters' documents with it too.
export {
  DocumentBody,
  documentInput,
  type DocumentInput,
  type DocumentItem,
  type DocumentKind,
  KINDS,
  kindOf,
  parseDocument,
} from '../../shared/stock-document-schemas.js';

const INT32_MAX = 2_147_483_647;
const Packets = Type.Integer({ minimum: 1, maximum: INT32_MAX });

export const WarehouseBody = Type.Object({ id: Uuid, name: Type.String({ minLength: 1, maxLength: 200 }) });
export type WarehouseBody = Static<typeof WarehouseBody>;

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

const lockLines = (items: Static<typeof ItemLock>[], path: string): LockLine[] => {
  const q = micros(items.map((it, i) => ({ path: `${path}/${i}/qty`, qty: it.qty })));
  return items.map((it, i) => ({ id: it.id, unit: it.unit, qtyMicro: q[i]! }));
};

/** A lock body checked by LockBody (the route's schema), its quantities in micro-units. */
export function lockOf(lock: Static<typeof LockBody>): { packets: number; items: LockLine[] } {
  return { packets: lock.qty, items: lockLines(lock.items, '/items') };
}

const pointerPart = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Packets in body order, from a body checked by PacketsBody (the route's schema). `raw` is the body text:
 * JSON.parse puts integer-like keys ("1", "2") first.
 */
export function packetsOf({ packets }: Static<typeof PacketsBody>, raw: string): PacketInput[] {
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
