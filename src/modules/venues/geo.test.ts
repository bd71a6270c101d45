import { expect, test } from 'vitest';
import { distanceMeters } from './geo.js';

test('great-circle distance matches known city pairs', () => {
  const krakow = { lat: 50.0617, lng: 19.9373 };
  const warsaw = { lat: 52.2297, lng: 21.0122 };
  expect(distanceMeters(krakow, warsaw) / 1000).toBeCloseTo(252, 0);
  expect(distanceMeters(krakow, krakow)).toBe(0);
  // Across the antimeridian the short way round is taken.
  expect(distanceMeters({ lat: 0, lng: 179.5 }, { lat: 0, lng: -179.5 }) / 1000).toBeCloseTo(111.2, 0);
});
