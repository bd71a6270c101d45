// The menu's shapes are shared with the central (src/shared/catalogue-schemas.ts), which validates them as the box does.
export { Category, isProduct, Product } from '../../shared/catalogue-schemas.js';
export type { MenuNode } from '../../shared/catalogue-schemas.js';
