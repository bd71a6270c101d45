import type { Static } from '@sinclair/typebox';
import type { HqDevice } from '../../../../src/central/modules/devices/schemas.js';
import { ago, dateTime, number, t } from '../../i18n.js';

/** GET /hq-api/api/devices (docs/sync.md "API"): the central's own schema's type, never a copy of it. */
export type Device = Static<typeof HqDevice>;

/** The central's "online": a contact within the last 15 minutes (docs/sync.md "API"). */
export const isOnline = (d: Device): boolean => d.online;

export const deviceName = (d: Device): string => d.name ?? d.id.slice(0, 8);

/** The device's state as a badge: revoked, online, or offline. */
export function StateBadge({ d }: { d: Device }) {
  const [cls, key] = d.status === 'revoked' ? ['bad', 'revoked'] : isOnline(d) ? ['ok', 'online'] : ['warn', 'offline'];
  return (
    <span class={`badge ${cls}`} data-testid="fleet-state" data-state={key}>
      {t(`fleet.${key}`)}
    </span>
  );
}

export function updateText(d: Device): string {
  if (!d.update) return '–';
  const parts = [t(`fleet.state.${d.update.state}`)];
  if (d.update.target) parts.push(t('fleet.updateTarget', { version: d.update.target }));
  if (d.update.reason) parts.push(t('fleet.updateReason', { reason: d.update.reason }));
  return parts.join(', ');
}

export const offsetText = (ms: number | null): string =>
  ms === null ? '–' : `${ms > 0 ? '+' : ''}${number(ms / 1000, 1)} s`;

export const contactText = (iso: string | null): string =>
  iso ? `${dateTime(iso)} (${t('fleet.ago', { ago: ago(iso) })})` : t('fleet.never');
