import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { migrate } from '../../db/migrate.js';
import { createVenueRepo } from './repo.js';

test('a venue is parsed once while its row holds the same JSON, and afresh when the row changes', () => {
  const db = new Database(':memory:');
  migrate(db);
  db.pragma('foreign_keys = OFF'); // venues without their tenant and menu rows: only the cache is looked at
  const put = db.prepare(`INSERT INTO venues (tenant_id, id, menu_id, lat, lng, venue_json) VALUES (?, ?, 'm', 0, 0, ?)
    ON CONFLICT (tenant_id, id) DO UPDATE SET venue_json = excluded.venue_json`);
  put.run('t', 'v1', '{"id":"v1","name":"Bar"}');
  put.run('u', 'v1', '{"id":"v1","name":"Other tenant"}');
  const venues = createVenueRepo(db);
  const first = venues.getVenue('t', 'v1');
  expect(first).toMatchObject({ name: 'Bar' });
  expect(venues.getVenue('t', 'v1')).toBe(first);
  expect(venues.listVenues('t')[0]).toBe(first);
  // The same id at another tenant is another venue.
  expect(venues.getVenue('u', 'v1')).toMatchObject({ name: 'Other tenant' });
  put.run('t', 'v1', '{"id":"v1","name":"Bistro"}');
  expect(venues.getVenue('t', 'v1')).toMatchObject({ name: 'Bistro' });
  db.prepare("DELETE FROM venues WHERE tenant_id = 't'").run();
  expect(venues.getVenue('t', 'v1')).toBeUndefined();
});
