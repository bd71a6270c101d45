/**
 * Down: the catalogue (docs/sync.md "Down: the catalogue"). Headquarters' data (the tenant, OAuth clients, staff
 * users, venues, menus, warehouses, headquarters' sold-out flags) lives at the central, each row with the
 * `rev` of its last change; a box asks for the rows changed after its cursor and applies them in one SQLite
 * transaction with its new cursor. Both sides import this file and compute the same checksum.
 */
import { createHash } from 'node:crypto';
import { type CatalogueItem, ITEM_TYPES, type ItemType } from './catalogue-items.js';
import type { InboxEntry } from './hq-inbox.js';
import type { ReleaseTarget } from './release-schemas.js';

export interface CatalogueResponse {
  tenant: string;
  /** The catalogue's rev after these items: the box's next cursor. */
  rev: number;
  /**
   * `changes`: the rows changed after the cursor (tombstones included), possibly none after a long poll's
   * wait. `snapshot`: every live row; the box replaces its whole catalogue of the tenant (a cursor older than
   * the oldest purged tombstone, a cursor ahead of the central, a first request, or `snapshot=1`).
   */
  mode: 'changes' | 'snapshot';
  /** catalogueChecksum of the central's live rows at `rev`. */
  checksum: string;
  items: CatalogueItem[];
  /**
   * Documents and orders headquarters sent to the asking box's venue (src/shared/hq-inbox.ts), after the cursor
   * (with a snapshot: those no box reported on yet). Not in the checksum. Absent from a central without them.
   */
  inbox?: InboxEntry[];
  /**
   * The release the asking box should run (src/shared/release-schemas.ts; docs/operations.md "Updating boxes"), null
   * when no rollout names it. Absent from a central without releases.
   */
  release?: ReleaseTarget | null;
}

/** Longest wait a box may ask for, in seconds; the central answers at once when a change commits. */
export const MAX_CATALOGUE_WAIT_S = 60;

/** JSON with object keys sorted at every level: the same data gives the same text on both sides. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * sha256 over the live rows, ordered by type then id, each as `type\tid\tcanonical data\n`: the central sends
 * it with every answer, the box computes it over what it holds after applying. A difference is drift.
 */
export function catalogueChecksum(rows: { type: ItemType; id: string; data: unknown }[]): string {
  const order = (t: ItemType) => ITEM_TYPES.indexOf(t);
  const sorted = [...rows].sort((a, b) => order(a.type) - order(b.type) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const hash = createHash('sha256');
  for (const r of sorted) hash.update(`${r.type}\t${r.id}\t${canonicalJson(r.data)}\n`, 'utf8');
  return hash.digest('hex');
}

/** The key of a headquarters sold-out flag. */
export const soldOutId = (venue: string, productId: string): string => `${venue}/${productId}`;
