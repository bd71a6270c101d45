import { FormatRegistry } from '@sinclair/typebox';
import { expect, test } from 'vitest';
import { RELEASE_CHECKS } from '../../shared/release.js';
import { isDateTime, registerDateTimeFormat } from './date-time-format.js';

test('RFC 3339 date-times that name an instant pass; anything else does not', () => {
  for (const ok of [
    '2026-11-27T09:00:00.000Z',
    '2026-11-27T09:00:00Z',
    '2026-11-27T10:00:00+01:00',
    '2024-02-29T23:59:59.5Z',
  ]) {
    expect(isDateTime(ok), ok).toBe(true);
  }
  for (const bad of ['2026-11-27', '2026-11-27 09:00:00Z', '2026-13-01T00:00:00Z', '2026-11-27T24:00:00Z', 'now', '']) {
    expect(isDateTime(bad), bad).toBe(false);
  }
});

test("the release manifest's check refuses every createdAt until 'date-time' is registered", () => {
  const manifest = {
    format: 1,
    version: '1.0.0',
    arch: 'x64',
    sha256: '0'.repeat(64),
    size: 1,
    node: '24.21.0',
    schema: { box: 12 },
    notes: '',
    createdAt: '2026-11-27T09:00:00.000Z',
    rollback: false,
  };
  FormatRegistry.Delete('date-time');
  expect(RELEASE_CHECKS.manifest.Check(manifest)).toBe(false);
  registerDateTimeFormat();
  expect(RELEASE_CHECKS.manifest.Check(manifest)).toBe(true);
  expect(RELEASE_CHECKS.manifest.Check({ ...manifest, createdAt: 'yesterday' })).toBe(false);
});
