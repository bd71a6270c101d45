import type { ErrorDetail } from '../../../shared/errors.js';
import type { InboxEntry, InboxKind } from '../../../shared/hq-inbox.js';
import type { InboxResultBody } from '../../../shared/sync-messages.js';
import type { Queryable } from '../../db/pool.js';

interface Row {
  entry_id: string;
  venue_id: string;
  kind: InboxKind;
  body: Record<string, unknown>;
  rev: number;
  created_by: string;
  created_at: Date;
  result_status: 'applied' | 'rejected' | null;
  result_codes: ErrorDetail[] | null;
  result_device: string | null;
  result_at: Date | null;
  delivered: boolean;
}

/** An entry as headquarters sees it: what was sent, and how far it went. */
export interface InboxView {
  id: string;
  kind: InboxKind;
  venue: string;
  rev: number;
  createdBy: string;
  createdAt: string;
  /** pending: no box of the venue asked past its rev yet; delivered: one did; applied/rejected: a box reported so. */
  status: 'pending' | 'delivered' | 'applied' | 'rejected';
  codes: ErrorDetail[];
  device: string | null;
  resultAt: string | null;
  body: Record<string, unknown>;
}

const view = (r: Row): InboxView => ({
  id: r.entry_id,
  kind: r.kind,
  venue: r.venue_id,
  rev: r.rev,
  createdBy: r.created_by,
  createdAt: r.created_at.toISOString(),
  status: r.result_status ?? (r.delivered ? 'delivered' : 'pending'),
  codes: r.result_codes ?? [],
  device: r.result_device,
  resultAt: r.result_at?.toISOString() ?? null,
  body: r.body,
});

const SELECT = `SELECT i.*, EXISTS (SELECT 1 FROM devices d WHERE d.tenant_id = i.tenant_id AND d.venue_id = i.venue_id
  AND d.status = 'active' AND d.catalogue_rev >= i.rev) AS delivered FROM hq_inbox i`;

/** SQL of what headquarters sends to one venue's box (migration 4). */
export function createInboxRepo(db: Queryable) {
  return {
    async get(tenantId: string, id: string): Promise<InboxView | undefined> {
      const { rows } = await db.query<Row>(`${SELECT} WHERE i.tenant_id = $1 AND i.entry_id = $2`, [tenantId, id]);
      return rows[0] && view(rows[0]);
    },
    async list(tenantId: string, venueId: string | undefined, limit: number): Promise<InboxView[]> {
      const { rows } = await db.query<Row>(
        `${SELECT} WHERE i.tenant_id = $1 AND ($2::text IS NULL OR i.venue_id = $2) ORDER BY i.rev DESC LIMIT $3`,
        [tenantId, venueId ?? null, limit],
      );
      return rows.map(view);
    },
    async insert(
      tenantId: string,
      e: { id: string; venue: string; kind: InboxKind; body: unknown; createdBy: string },
      rev: number,
    ): Promise<void> {
      await db.query(
        `INSERT INTO hq_inbox (tenant_id, entry_id, venue_id, kind, body, rev, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [tenantId, e.id, e.venue, e.kind, JSON.stringify(e.body), rev, e.createdBy],
      );
    },
    /**
     * What a box of `venueId` receives with a catalogue answer at rev `upTo`: the entries after its cursor; with a
     * snapshot (a new box, a cursor the log no longer reaches), every entry no box has reported on yet.
     */
    async forBox(
      tenantId: string,
      venueId: string,
      after: number,
      snapshot: boolean,
      upTo: number,
    ): Promise<InboxEntry[]> {
      const { rows } = await db.query<Row>(
        `SELECT * FROM hq_inbox WHERE tenant_id = $1 AND venue_id = $2 AND rev <= $5
           AND CASE WHEN $4 THEN result_status IS NULL ELSE rev > $3 END ORDER BY rev`,
        [tenantId, venueId, after, snapshot, upTo],
      );
      return rows.map((r) => ({
        id: r.entry_id,
        rev: r.rev,
        venue: r.venue_id,
        kind: r.kind,
        body: r.body,
        createdBy: r.created_by,
        createdAt: r.created_at.toISOString(),
      }));
    },
    /** The cursor a box asked with: everything up to it is applied on that box (its acknowledgement). */
    async acknowledge(tenantId: string, deviceId: string, rev: number): Promise<void> {
      await db.query(
        `UPDATE devices SET catalogue_rev = $3, catalogue_rev_at = now()
         WHERE tenant_id = $1 AND device_id = $2 AND catalogue_rev <> $3`,
        [tenantId, deviceId, rev],
      );
    },
    /** A box's report (its `inbox.result` event); the first report stands. False for an entry the central does not hold. */
    async recordResult(
      tenantId: string,
      deviceId: string,
      entryId: string,
      status: string,
      codes: InboxResultBody['codes'],
    ): Promise<boolean> {
      const { rowCount } = await db.query(
        `UPDATE hq_inbox SET result_status = coalesce(result_status, $4), result_codes = coalesce(result_codes, $5),
           result_device = coalesce(result_device, $3), result_at = coalesce(result_at, now())
         WHERE tenant_id = $1 AND entry_id = $2`,
        [tenantId, entryId, deviceId, status, JSON.stringify(codes)],
      );
      return (rowCount ?? 0) > 0;
    },
  };
}
export type InboxRepo = ReturnType<typeof createInboxRepo>;
