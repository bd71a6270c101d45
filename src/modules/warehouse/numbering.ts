import { createHash } from 'node:crypto';
import type { DocumentInput, DocumentKind } from './schemas.js';

/** Number prefix of a kind: PZ/2026/11/000001, INV/2026/11/000001 for a stocktake. */
export const numberPrefix = (kind: DocumentKind): string => (kind === 'Inventory' ? 'INV' : kind);

/** The numbering period of a moment: its UTC year and month, "2026/11". */
export function periodOf(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}/${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

export const formatNumber = (kind: DocumentKind, period: string, seq: number): string =>
  `${numberPrefix(kind)}/${period}/${String(seq).padStart(6, '0')}`;

/** A string map as sorted [key, value] pairs, so key order never matters. */
const sorted = (map: Record<string, string> | undefined) =>
  map === undefined ? null : Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * Digest of what the client sent, for safe retry: a document posted again under the same number is the
 * same document when its items (every field), unlockItems, extra and targetWarehouse are equal. Key order
 * does not matter, nor an absent unlockItems or extra against false or {}. Fields are listed in a fixed
 * order (parseDocument keeps only the known ones): a generic sorted-keys canonical JSON cost 12 ms here for
 * 2048 items, this costs about 2.
 */
export function contentDigest(doc: DocumentInput): string {
  const content = [
    doc.kind,
    doc.number ?? null,
    doc.unlockItems,
    sorted(doc.extra),
    doc.targetWarehouse ?? null,
    doc.items.map((i) => [i.id, i.unit, i.qty, i.unitPrice ?? null, i.total ?? null, i.cat ?? null, sorted(i.extra)]),
  ];
  return createHash('sha256').update(JSON.stringify(content)).digest('hex');
}
