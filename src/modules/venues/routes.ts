import { Type } from '@sinclair/typebox';
import { json, type Route, route } from '../../http/types.js';
import { Venue } from './schemas.js';
import { distanceMeters } from './geo.js';
import type { VenueRepo } from './repo.js';

/**
 * Decimal degrees: any finite number in range, exponent form and long fractions included (the query's check,
 * src/http/contracts/query.ts, reads them with decimalNumber).
 */
const NearestQuery = Type.Object({
  lat: Type.Number({
    minimum: -90,
    maximum: 90,
    description: 'latitude in decimal degrees, -90 to 90 (any finite number: 50.0614, 5.00614e1)',
  }),
  lng: Type.Number({ minimum: -180, maximum: 180, description: 'longitude in decimal degrees, -180 to 180' }),
});

export function venueRoutes(venues: VenueRepo): Route[] {
  return [
    route({
      method: 'get',
      path: '/venue-api/api/nearest',
      auth: 'bearer',
      body: 'none',
      schema: { query: NearestQuery },
      doc: {
        operationId: 'listNearestVenues',
        summary: "The tenant's venues, closest first",
        responses: { 200: { description: 'the venues', schema: Type.Array(Venue) } },
      },
      handle({ query, principal }) {
        const here = { lat: query.lat, lng: query.lng };
        const list = venues
          .listVenues(principal.tenantId)
          .map((v) => ({ v, d: distanceMeters(here, v.geoPosition) }))
          .sort((a, b) => a.d - b.d)
          .map((x) => x.v);
        return json(200, list);
      },
    }),
  ];
}
