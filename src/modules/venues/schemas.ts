import { type Static, Type } from '@sinclair/typebox';
import { Price, Uuid } from '../../shared/types.js';

const Time = Type.String({ pattern: '^(([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d)?|24:00(:00)?)$' });
export const Interval = Type.Object({ from: Time, to: Time });
export const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
export type Day = (typeof DAYS)[number];

export const ChannelConstraint = Type.Object({
  active: Type.Boolean(),
  minDeliveryTime: Type.String({ pattern: '^\\d{2}:[0-5]\\d:[0-5]\\d$' }),
  minOrderValue: Type.Optional(Price),
  week: Type.Object(Object.fromEntries(DAYS.map((d) => [d, Type.Array(Interval, { maxItems: 12 })])) as Record<
    Day,
    ReturnType<typeof Type.Array<typeof Interval>>
  >),
});
export type ChannelConstraint = Static<typeof ChannelConstraint>;

export const CHANNELS = ['DELIVERY', 'TAKE_AWAY', 'DINE_IN'] as const;
export type Channel = (typeof CHANNELS)[number];

/** A venue exactly as GET /venue-api/api/nearest returns it (and as provisioning gives it). */
export const Venue = Type.Object(
  {
    id: Uuid,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    menu: Type.String({ minLength: 1, maxLength: 100 }),
    active: Type.Boolean(),
    address: Type.Object({
      street: Type.String(), number: Type.String(), postal: Type.String(), city: Type.String(),
      country: Type.String(),
    }),
    timeZone: Type.String({ minLength: 1 }),
    geoPosition: Type.Object({
      lat: Type.Number({ minimum: -90, maximum: 90 }),
      lng: Type.Number({ minimum: -180, maximum: 180 }),
    }),
    channelConstraints: Type.Partial(
      Type.Object({ DELIVERY: ChannelConstraint, TAKE_AWAY: ChannelConstraint, DINE_IN: ChannelConstraint }),
    ),
    warehouse: Uuid,
  },
  { additionalProperties: false },
);
export type Venue = Static<typeof Venue>;
