// The provisioning file's shape is shared with `venue-box central import` (src/shared/catalogue-schemas.ts).
export { Provisioning } from '../../shared/catalogue-schemas.js';
export type { TenantSpec } from '../../shared/catalogue-schemas.js';
