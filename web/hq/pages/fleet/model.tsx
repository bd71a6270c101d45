import { ago, dateTime, number, t } from '../../i18n.js';

/**
 * GET /hq-api/api/devices (docs/sync.md "API"; the fields after `enrolledAt` came with the console). The
 * optional ones may be absent from a central that predates them; the page shows "–" then.
 */
export interface Device {
  id: string;
  name: string | null;
  venue: string;
  venueName?: string | null;
  status: 'active' | 'revoked';
  keyId: string;
  head: { epoch: number; seq: number; hash: string };
  lagEvents: number;
  lastContactAt: string | null;
  clockOffsetMs: number | null;
  deadLetters: number;
  enrolledAt: string;
  version?: string | null;
  arch?: string | null;
  update?: { state: string; version?: string; target?: string; reason?: string; detail?: string } | null;
  catalogueRev?: number | null;
  oldestPendingAt?: string | null;
  online?: boolean;
}

/** The central's "online": a contact within the last 15 minutes (docs/sync.md "API"). */
const ONLINE_MS = 15 * 60_000;
export const isOnline = (d: Device, now = Date.now()): boolean =>
  d.online ?? (d.lastContactAt !== null && now - Date.parse(d.lastContactAt) < ONLINE_MS);

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
