import { expect, test } from 'vitest';
import { readiness, type ReadinessState } from './readiness.js';

const fine: ReadinessState = { schemaVersion: 6, latestSchema: 6, readOnly: false, disk: 'ok', queueFailing: false };
const reasonOf = (stopping: boolean, s: Partial<ReadinessState>) => {
  const r = readiness(stopping, () => ({ ...fine, ...s }));
  return r.ready ? 'ready' : `${r.code}:${r.reason}`;
};

test('ready when not stopping, migrated, writable, with space and a working queue; a low disk is still ready', () => {
  expect(reasonOf(false, {})).toBe('ready');
  expect(reasonOf(false, { disk: 'low' })).toBe('ready');
});

test('each reason not to be ready, the first one winning', () => {
  expect(reasonOf(true, {})).toBe('unavailable:stopping');
  expect(reasonOf(false, { schemaVersion: 5 })).toBe('unavailable:migrations');
  expect(reasonOf(false, { readOnly: true })).toBe('unavailable:readOnly');
  expect(reasonOf(false, { disk: 'full' })).toBe('storageFull:storageFull');
  expect(reasonOf(false, { queueFailing: true })).toBe('unavailable:database');
  expect(reasonOf(true, { disk: 'full', queueFailing: true })).toBe('unavailable:stopping');
  expect(reasonOf(false, { disk: 'full', queueFailing: true })).toBe('storageFull:storageFull');
  expect(reasonOf(false, { failedService: 'command queue' })).toBe('unavailable:serviceFailed');
  expect(reasonOf(true, { failedService: 'command queue' })).toBe('unavailable:stopping');
});

test('while stopping the database is not looked at (it may be closed)', () => {
  expect(
    readiness(true, () => {
      throw new Error('database connection is not open');
    }),
  ).toMatchObject({ ready: false, reason: 'stopping' });
});
