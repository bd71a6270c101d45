import { json, type Route } from '../../http/types.js';
import { invalidField } from '../../shared/errors.js';
import { distanceMeters } from './geo.js';
import type { VenueRepo } from './repo.js';

export function venueRoutes(venues: VenueRepo): Route[] {
  return [
    {
      method: 'get',
      path: '/venue-api/api/nearest',
      auth: 'bearer',
      body: 'none',
      handle({ req, principal }) {
        const here = { lat: coordinate(req.query, 'lat', 90), lng: coordinate(req.query, 'lng', 180) };
        const list = venues
          .listVenues(principal.tenantId)
          .map((v) => ({ v, d: distanceMeters(here, v.geoPosition) }))
          .sort((a, b) => a.d - b.d)
          .map((x) => x.v);
        return json(200, list);
      },
    },
  ];
}

/** Plain decimal degrees only: Number() would also take "0x10", "1e1" or "Infinity". */
const DECIMAL = /^[-+]?\d{1,3}(\.\d{1,15})?$/;

function coordinate(query: URLSearchParams, name: string, limit: number): number {
  const text = query.get(name) ?? '';
  const value = DECIMAL.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value) || Math.abs(value) > limit) {
    throw invalidField(name, `query parameter ${name} must be a number between -${limit} and ${limit}`);
  }
  return value;
}
