import { Type } from '@sinclair/typebox';
import { json, type Route } from '../../http/types.js';
import { Venue } from './schemas.js';
import { invalidField } from '../../shared/errors.js';
import { decimalNumber } from '../../shared/validate.js';
import { distanceMeters } from './geo.js';
import type { VenueRepo } from './repo.js';

export function venueRoutes(venues: VenueRepo): Route[] {
  return [
    {
      method: 'get',
      path: '/venue-api/api/nearest',
      auth: 'bearer',
      body: 'none',
      schema: {
        query: Type.Object({
          lat: Type.String({
            description: 'latitude in decimal degrees, -90 to 90 (any finite number: 50.0614, 5.00614e1)',
          }),
          lng: Type.String({ description: 'longitude, -180 to 180' }),
        }),
      },
      doc: {
        summary: "The tenant's venues, closest first",
        responses: { 200: { description: 'the venues', schema: Type.Array(Venue) } },
      },
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

/** Decimal degrees as any finite number in range, exponent form and long fractions included (decimalNumber). */
function coordinate(query: URLSearchParams, name: string, limit: number): number {
  const value = decimalNumber(query.get(name) ?? '');
  if (!Number.isFinite(value) || Math.abs(value) > limit) {
    throw invalidField(name, `query parameter ${name} must be a number between -${limit} and ${limit}`);
  }
  return value;
}
