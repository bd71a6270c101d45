// The venue's shapes are shared with the central (src/shared/catalogue-schemas.ts), which validates them as the box does.
export { ChannelConstraint, CHANNELS, DAYS, Interval, Venue } from '../../shared/catalogue-schemas.js';
export type { Channel, Day } from '../../shared/catalogue-schemas.js';
