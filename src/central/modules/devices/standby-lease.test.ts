import { describe, expect, test } from 'vitest';
import { decideLease, type StoredLease } from './standby-lease.js';

// The witness's rule (docs/sync.md "The standby lease"), every branch; the route and its races:
// test/central-standby-lease.test.ts.
const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
const NOW = 1_000_000;
const live: StoredLease = { term: 3, holder: A, untilMs: NOW + 1 };
const lapsed: StoredLease = { term: 3, holder: A, untilMs: NOW };

describe('a renewal (claim: false)', () => {
  test('is granted with no lease yet, for its own term, or for a higher one', () => {
    expect(decideLease(null, { holder: A, term: 0, claim: false }, NOW)).toEqual({ grant: true });
    expect(decideLease(live, { holder: A, term: 3, claim: false }, NOW)).toEqual({ grant: true });
    expect(decideLease(lapsed, { holder: A, term: 3, claim: false }, NOW)).toEqual({ grant: true });
    expect(decideLease(live, { holder: B, term: 4, claim: false }, NOW)).toEqual({ grant: true });
  });

  test('is fenced by a higher term, and refused for a term another box holds', () => {
    expect(decideLease(live, { holder: A, term: 2, claim: false }, NOW)).toMatchObject({
      grant: false,
      why: expect.stringMatching(/^fenced: term 3/),
    });
    expect(decideLease(lapsed, { holder: B, term: 3, claim: false }, NOW)).toMatchObject({ grant: false });
  });
});

describe('a claim (claim: true)', () => {
  test('is granted with no lease yet, once the lease it replaces has run out, and again to its holder', () => {
    expect(decideLease(null, { holder: B, term: 1, claim: true }, NOW)).toEqual({ grant: true });
    expect(decideLease(lapsed, { holder: B, term: 4, claim: true }, NOW)).toEqual({ grant: true });
    expect(decideLease({ term: 4, holder: B, untilMs: NOW + 9 }, { holder: B, term: 4, claim: true }, NOW)).toEqual({
      grant: true,
    });
  });

  test('is refused while the lease is live, for a term that is taken, and below the stored term', () => {
    expect(decideLease(live, { holder: B, term: 4, claim: true }, NOW)).toMatchObject({
      grant: false,
      why: expect.stringMatching(/live for 1 ms/),
    });
    expect(decideLease(lapsed, { holder: B, term: 3, claim: true }, NOW)).toMatchObject({ grant: false });
    expect(decideLease(lapsed, { holder: B, term: 2, claim: true }, NOW)).toMatchObject({ grant: false });
  });
});
