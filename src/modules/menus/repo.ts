import type { Db } from '../../db/open.js';
import type { MenuNode } from './schemas.js';

export interface ProductRow {
  id: string;
  name: string;
  priceMinor: number;
  /** null: sold on every channel. */
  channels: string[] | null;
  snapshotJson: string;
}

/** SQL of menus and their products. */
export function createMenuRepo(db: Db) {
  const root = db.prepare<[string, string], { root_json: string }>(
    'SELECT root_json FROM menus WHERE tenant_id = ? AND id = ?',
  );
  const product = db.prepare<
    [string, string, string],
    { id: string; name: string; price_minor: number; channels: string | null; snapshot_json: string }
  >(
    'SELECT id, name, price_minor, channels, snapshot_json FROM products WHERE tenant_id = ? AND menu_id = ? AND id = ?',
  );
  return {
    menuRoot: (tenantId: string, menuId: string): MenuNode | undefined => {
      const row = root.get(tenantId, menuId);
      return row ? (JSON.parse(row.root_json) as MenuNode) : undefined;
    },
    product: (tenantId: string, menuId: string, productId: string): ProductRow | undefined => {
      const r = product.get(tenantId, menuId, productId);
      if (!r) return undefined;
      return {
        id: r.id,
        name: r.name,
        priceMinor: r.price_minor,
        channels: r.channels ? r.channels.split(',') : null,
        snapshotJson: r.snapshot_json,
      };
    },
  };
}
export type MenuRepo = ReturnType<typeof createMenuRepo>;
