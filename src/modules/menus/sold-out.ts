import type { Db } from '../../db/open.js';
import { isoOf } from '../../shared/clock.js';
import { notFound } from '../../shared/errors.js';
import type { Outbox } from '../sync/up/outbox.js';
import type { VenueRepo } from '../venues/repo.js';
import type { MenuRepo } from './repo.js';

/** A sold-out product of one venue, as the menu's `locks` array lists it (the wire keeps the name `locks`). */
export interface SoldOutEntry {
  productId: string;
  venue: string;
  reason: string;
  since: string;
}

export interface SoldOutChange {
  venue: string;
  productId: string;
  locked: boolean;
  reason?: string;
}

export interface SoldOutState {
  productId: string;
  venue: string;
  locked: boolean;
  reason: string | null;
  since: string | null;
}

/**
 * Sold-out products, per venue: staff lock a product when the kitchen runs out and clear it when it is back.
 * Venues that share a menu sell out separately, so a lock names the venue, not the menu.
 */
export function createSoldOutFlags(db: Db, menus: MenuRepo, venues: VenueRepo, outbox: Outbox) {
  const s = {
    upsert: db.prepare(
      `INSERT INTO product_locks (tenant_id, venue_id, product_id, reason, since_ms) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, venue_id, product_id) DO UPDATE SET reason = excluded.reason`,
    ),
    remove: db.prepare('DELETE FROM product_locks WHERE tenant_id = ? AND venue_id = ? AND product_id = ?'),
    one: db.prepare<[string, string, string], { reason: string; since_ms: number }>(
      'SELECT reason, since_ms FROM product_locks WHERE tenant_id = ? AND venue_id = ? AND product_id = ?',
    ),
    all: db.prepare<[], { tenant_id: string; venue_id: string; product_id: string; reason: string }>(
      'SELECT tenant_id, venue_id, product_id, reason FROM product_locks ORDER BY since_ms, rowid',
    ),
    ofVenue: db.prepare<[string, string], { product_id: string; reason: string; since_ms: number }>(
      'SELECT product_id, reason, since_ms FROM product_locks WHERE tenant_id = ? AND venue_id = ? ORDER BY since_ms, product_id',
    ),
    // The staff's flag or headquarters' (hq_sold_out, docs/sync.md "Down: the catalogue"): sold out while either is
    // set. One statement: it runs for every line of every order command.
    soldOut: db.prepare<[string, string, string, string, string, string], { out: number }>(
      `SELECT EXISTS (SELECT 1 FROM product_locks WHERE tenant_id = ? AND venue_id = ? AND product_id = ?)
         OR EXISTS (SELECT 1 FROM hq_sold_out WHERE tenant_id = ? AND venue_id = ? AND product_id = ?) AS out`,
    ),
    hqOfVenue: db.prepare<[string, string], { product_id: string; reason: string; since_ms: number }>(
      'SELECT product_id, reason, since_ms FROM hq_sold_out WHERE tenant_id = ? AND venue_id = ? ORDER BY since_ms, product_id',
    ),
  };

  return {
    /**
     * Locks (keeping the first `since`, updating the reason) or clears a lock; both are idempotent. The staff
     * flag travels up to the central (soldout.changed) in the same transaction.
     */
    set: (tenantId: string, menuId: string, change: SoldOutChange, nowMs: number): SoldOutState =>
      db
        .transaction(() => {
          const venue = venues.getVenue(tenantId, change.venue);
          if (!venue || venue.menu !== menuId) throw notFound('menu for this venue');
          if (!menus.product(tenantId, menuId, change.productId)) throw notFound('product');
          if (change.locked) s.upsert.run(tenantId, change.venue, change.productId, change.reason ?? '', nowMs);
          else s.remove.run(tenantId, change.venue, change.productId);
          const row = s.one.get(tenantId, change.venue, change.productId);
          outbox.append(
            tenantId,
            'soldout.changed',
            `${change.venue}/${change.productId}`,
            {
              venue: change.venue,
              menu: menuId,
              productId: change.productId,
              locked: row !== undefined,
              reason: row?.reason ?? null,
            },
            nowMs,
          );
          return {
            productId: change.productId,
            venue: change.venue,
            locked: row !== undefined,
            reason: row?.reason ?? null,
            since: row ? isoOf(row.since_ms) : null,
          };
        })
        .immediate(),
    /** Once, on the first start with sync: every staff flag the box held before goes up. Returns how many. */
    backfillSync(nowMs: number): number {
      const all = s.all.all();
      for (const l of all) {
        const menu = venues.getVenue(l.tenant_id, l.venue_id)?.menu ?? '';
        outbox.append(
          l.tenant_id,
          'soldout.changed',
          `${l.venue_id}/${l.product_id}`,
          {
            venue: l.venue_id,
            menu,
            productId: l.product_id,
            locked: true,
            reason: l.reason,
          },
          nowMs,
        );
      }
      return all.length;
    },
    /** Puts a staff flag back from the central's copy (a box restored from an old copy); no outbox event. */
    reinstate(
      tenantId: string,
      change: { venue: string; productId: string; locked: boolean; reason: string | null },
      nowMs: number,
    ): void {
      if (change.locked) s.upsert.run(tenantId, change.venue, change.productId, change.reason ?? '', nowMs);
      else s.remove.run(tenantId, change.venue, change.productId);
    },
    /** The staff's locks, then headquarters' flags on products the staff did not lock (`since`: when the box got it). */
    entriesOf(tenantId: string, venueId: string): SoldOutEntry[] {
      const staff = s.ofVenue.all(tenantId, venueId).map((r) => ({
        productId: r.product_id,
        venue: venueId,
        reason: r.reason,
        since: isoOf(r.since_ms),
      }));
      const hq = s.hqOfVenue
        .all(tenantId, venueId)
        .filter((r) => !staff.some((l) => l.productId === r.product_id))
        .map((r) => ({ productId: r.product_id, venue: venueId, reason: r.reason, since: isoOf(r.since_ms) }));
      return [...staff, ...hq];
    },
    isSoldOut: (tenantId: string, venueId: string, productId: string): boolean =>
      s.soldOut.get(tenantId, venueId, productId, tenantId, venueId, productId)!.out === 1,
  };
}
export type SoldOutFlags = ReturnType<typeof createSoldOutFlags>;
