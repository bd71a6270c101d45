import type { Db } from '../../db/open.js';
import type { Venue } from './schemas.js';

/** SQL of venues. Venues are kept as the JSON the API serves, with the columns queries need beside it. */
export function createVenueRepo(db: Db) {
  const all = db.prepare<[string], { venue_json: string }>('SELECT venue_json FROM venues WHERE tenant_id = ?');
  const one = db.prepare<[string, string], { venue_json: string }>(
    'SELECT venue_json FROM venues WHERE tenant_id = ? AND id = ?',
  );
  // An order command reads its venue several times; parsing its JSON each time showed in profiles. Parsed
  // venues are kept by their JSON text, so a re-provisioned venue is parsed afresh. Callers must not mutate.
  const parsed = new Map<string, Venue>();
  const parse = (json: string): Venue => {
    let venue = parsed.get(json);
    if (!venue) {
      if (parsed.size > 1000) parsed.clear();
      venue = JSON.parse(json) as Venue;
      parsed.set(json, venue);
    }
    return venue;
  };
  return {
    listVenues: (tenantId: string): Venue[] => all.all(tenantId).map((r) => parse(r.venue_json)),
    getVenue: (tenantId: string, id: string): Venue | undefined => {
      const row = one.get(tenantId, id);
      return row ? parse(row.venue_json) : undefined;
    },
  };
}
export type VenueRepo = ReturnType<typeof createVenueRepo>;
