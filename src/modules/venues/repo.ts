import type { Db } from '../../db/open.js';
import type { Venue } from './schemas.js';

/** SQL of venues. Venues are kept as the JSON the API serves, with the columns queries need beside it. */
export function createVenueRepo(db: Db) {
  const all = db.prepare<[string], { id: string; venue_json: string }>(
    'SELECT id, venue_json FROM venues WHERE tenant_id = ?',
  );
  const everyTenant = db.prepare<[], { tenant_id: string; id: string; venue_json: string }>(
    'SELECT tenant_id, id, venue_json FROM venues',
  );
  const one = db.prepare<[string, string], { id: string; venue_json: string }>(
    'SELECT id, venue_json FROM venues WHERE tenant_id = ? AND id = ?',
  );
  // An order command reads its venue several times; parsing its JSON each time showed in profiles. A parsed venue
  // is kept by tenant and id with the JSON text it came from, and used while the row holds that same text (a
  // comparison; keyed by the text itself, every lookup hashed the whole text anew). Callers must not mutate.
  const parsed = new Map<string, { json: string; venue: Venue }>();
  const parse = (tenantId: string, row: { id: string; venue_json: string }): Venue => {
    const key = `${tenantId} ${row.id}`;
    let entry = parsed.get(key);
    if (entry?.json !== row.venue_json) {
      if (!entry && parsed.size >= 1000) parsed.clear();
      entry = { json: row.venue_json, venue: JSON.parse(row.venue_json) as Venue };
      parsed.set(key, entry);
    }
    return entry.venue;
  };
  return {
    listVenues: (tenantId: string): Venue[] => all.all(tenantId).map((r) => parse(tenantId, r)),
    /** Every venue on the box, of every tenant. */
    allVenues: (): Venue[] => everyTenant.all().map((r) => parse(r.tenant_id, r)),
    getVenue: (tenantId: string, id: string): Venue | undefined => {
      const row = one.get(tenantId, id);
      return row ? parse(tenantId, row) : undefined;
    },
  };
}
export type VenueRepo = ReturnType<typeof createVenueRepo>;
