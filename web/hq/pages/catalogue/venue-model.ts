import { newUuid } from '../../../api.js';
import type { Live } from '../../data.js';
import type { Channel } from './menu-tree.js';

/**
 * A venue as PUT /hq-api/api/venues/:id takes it (src/shared/catalogue-schemas.ts Venue, mirrored here because that
 * file needs Node's crypto).
 */
export const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
export type Day = (typeof DAYS)[number];
export interface Interval {
  from: string;
  to: string;
}
export interface ChannelConstraint {
  active: boolean;
  minDeliveryTime: string;
  minOrderValue?: string;
  week: Record<Day, Interval[]>;
}
export interface Venue {
  id: string;
  name: string;
  menu: string;
  active: boolean;
  address: { street: string; number: string; postal: string; city: string; country: string };
  timeZone: string;
  geoPosition: { lat: number; lng: number };
  channelConstraints: Partial<Record<Channel, ChannelConstraint>>;
  warehouse: string;
}
/** The editor's copy: coordinates as typed (the central checks them and names the field). */
export type VenueDraft = Omit<Venue, 'geoPosition'> & { geoPosition: { lat: string; lng: string } };

export type VenueRow = Live<'venue'>;
export const venueOf = (row: VenueRow) => row.data as unknown as Venue;

export const emptyWeek = (): Record<Day, Interval[]> =>
  Object.fromEntries(DAYS.map((d) => [d, [] as Interval[]])) as Record<Day, Interval[]>;

export function draftOf(v: Venue): VenueDraft {
  return {
    id: v.id,
    name: v.name,
    menu: v.menu,
    active: v.active,
    address: { ...v.address },
    timeZone: v.timeZone,
    geoPosition: { lat: String(v.geoPosition.lat), lng: String(v.geoPosition.lng) },
    channelConstraints: structuredClone(v.channelConstraints ?? {}),
    warehouse: v.warehouse,
  };
}

/** A coordinate as typed: a number when it reads as one, else the text (the central refuses it, naming the field). */
const coordinate = (text: string): number | string => {
  const trimmed = text.trim().replace(',', '.');
  return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : text;
};

export function bodyOf(d: VenueDraft): unknown {
  return {
    ...d,
    geoPosition: { lat: coordinate(d.geoPosition.lat), lng: coordinate(d.geoPosition.lng) },
  };
}

/** A new venue: a fresh id, the first menu and warehouse, Poland, and no channel until one is added. */
export function newVenue(menu: string, warehouse: string): VenueDraft {
  return {
    id: newUuid(),
    name: '',
    menu,
    active: true,
    address: { street: '', number: '', postal: '', city: '', country: 'PL' },
    timeZone: 'Europe/Warsaw',
    geoPosition: { lat: '', lng: '' },
    channelConstraints: {},
    warehouse,
  };
}
