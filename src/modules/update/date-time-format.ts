import { FormatRegistry } from '@sinclair/typebox';

/**
 * TypeBox's checks refuse every string of a `format` nobody registered, and src/shared/release.ts gives the
 * manifest's `createdAt` the format 'date-time': until it is registered, RELEASE_CHECKS.manifest (and with it
 * verifyRelease) refuses every manifest. The release commands register it before they sign or verify; nothing else
 * in the process is affected, as `venue-box release` is a process of its own.
 */
const RFC3339 =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/i;

/** An RFC 3339 date-time (`2026-11-27T10:00:00.000Z`) that names a real instant. */
export const isDateTime = (value: string): boolean => RFC3339.test(value) && !Number.isNaN(Date.parse(value));

/** Registers 'date-time' unless something registered it already. */
export function registerDateTimeFormat(): void {
  if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime);
}
