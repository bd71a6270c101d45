import type { Db } from '../../db/open.js';
import type { Venue } from './schemas.js';

/** SQL of venues. Venues are kept as the JSON the API serves, with the columns queries need beside it. */
export function createVenueRepo(db: Db) {
  const all = db.prepare<[string], { venue_json: string }>('SELECT venue_json FROM venues WHERE tenant_id = ?');
  const one = db.prepare<[string, string], { venue_json: string }>(
    'SELECT venue_json FROM venues WHERE tenant_id = ? AND id = ?',
  );
  return {
    listVenues: (tenantId: string): Venue[] => all.all(tenantId).map((r) => JSON.parse(r.venue_json) as Venue),
    getVenue: (tenantId: string, id: string): Venue | undefined => {
      const row = one.get(tenantId, id);
      return row ? (JSON.parse(row.venue_json) as Venue) : undefined;
    },
  };
}
export type VenueRepo = ReturnType<typeof createVenueRepo>;
