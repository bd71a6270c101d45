/**
 * What headquarters sends down to one venue's box besides the catalogue (docs/sync.md "Documents from headquarters",
 * "Orders created at the central"): stock documents to book and orders to apply. Each is an entry of the
 * tenant's change log: it takes the tenant's next catalogue rev, travels in the same long poll (only to the
 * boxes of its venue), and is applied on the box in the transaction that moves the box's cursor past it. The
 * box applies an entry once by its id (a document's id, an order's id), however often it is delivered.
 */
import { type Static, Type } from '@sinclair/typebox';
import { NewOrderBody } from './order-schemas.js';
import { DocumentBody } from './stock-document-schemas.js';
import { Uuid } from './types.js';

export const INBOX_KINDS = ['document', 'order'] as const;
export type InboxKind = (typeof INBOX_KINDS)[number];

/** One entry as a box receives it. `body` is what headquarters sent (checked at the central, again on the box). */
export interface InboxEntry {
  id: string;
  rev: number;
  venue: string;
  kind: InboxKind;
  body: Record<string, unknown>;
  /** The headquarters user who created it (a document's `user` on the box). */
  createdBy: string;
  createdAt: string;
}

/** A document from headquarters: its id, kind and warehouse, then the box's own document body (PZ/WZ/RW/MM/Inventory). */
export const HqDocumentHead = Type.Object({
  id: Uuid,
  kind: Type.Union([
    Type.Literal('PZ'),
    Type.Literal('WZ'),
    Type.Literal('RW'),
    Type.Literal('MM'),
    Type.Literal('Inventory'),
  ]),
  warehouse: Uuid,
});
export type HqDocumentHead = Static<typeof HqDocumentHead>;

/** A document from headquarters as posted: its head and the box's document body, one schema (validates, documents). */
export const HqDocumentBody = Type.Object({ ...HqDocumentHead.properties, ...DocumentBody.properties });
export type HqDocumentBody = Static<typeof HqDocumentBody>;

/**
 * An order created at the central: the box's new-order body with one bucket (the venue whose box applies it),
 * its id chosen by the caller (the order's id on the box, so a retry is the same order), and whether to send it
 * to the kitchen at once (`submit`, default true: a call centre's order is complete when it is taken).
 */
export const HqOrderBody = Type.Object({ ...NewOrderBody.properties, id: Uuid, submit: Type.Optional(Type.Boolean()) });
export type HqOrderBody = Static<typeof HqOrderBody>;

/** The `source` of an order created at the central (the interface's Order.source). */
export const CENTRAL_SOURCE = 'central';
