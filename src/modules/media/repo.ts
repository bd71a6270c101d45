import type { Db } from '../../db/open.js';
import { type ImageExt, mediaOfMenu } from '../../shared/media.js';

/** SQL of the box's menu images: which central images its menus name (the files themselves live in DATA_DIR/media). */
export function createMediaRepo(db: Db) {
  const menus = db.prepare<[string, string, string], { root_json: string }>(
    `SELECT root_json FROM menus WHERE tenant_id = ?
     ORDER BY id IN (SELECT menu_id FROM venues WHERE tenant_id = ? AND id = ?) DESC, id`,
  );
  return {
    /**
     * Every central image the tenant's menus name, the menu of the box's own venue first, then by menu id: the
     * order in which the storage bound (sync.mediaMaxBytes) is spent.
     */
    wanted(tenantId: string, venueId: string): { sha256: string; ext: ImageExt }[] {
      const seen = new Map<string, { sha256: string; ext: ImageExt }>();
      for (const r of menus.all(tenantId, tenantId, venueId)) {
        for (const m of mediaOfMenu(JSON.parse(r.root_json))) if (!seen.has(m.sha256)) seen.set(m.sha256, m);
      }
      return [...seen.values()];
    },
  };
}
export type MediaRepo = ReturnType<typeof createMediaRepo>;
