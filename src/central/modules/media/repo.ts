import type { Queryable } from '../../db/pool.js';

export interface StoredImage {
  sha256: string;
  contentType: string;
  bytes: number;
  data: Buffer;
}

/** SQL of headquarters' images (migration 4): content-addressed per tenant, written once. */
export function createMediaRepo(db: Queryable) {
  return {
    /** True when the image was new; the same bytes again store nothing. */
    async insert(tenantId: string, image: StoredImage, createdBy: string): Promise<boolean> {
      const { rowCount } = await db.query(
        `INSERT INTO media (tenant_id, sha256, content_type, bytes, data, created_by) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (tenant_id, sha256) DO NOTHING`,
        [tenantId, image.sha256, image.contentType, image.bytes, image.data, createdBy],
      );
      return (rowCount ?? 0) > 0;
    },
    async get(tenantId: string, sha256: string): Promise<StoredImage | undefined> {
      const { rows } = await db.query<{ sha256: string; content_type: string; bytes: number; data: Buffer }>(
        'SELECT sha256, content_type, bytes, data FROM media WHERE tenant_id = $1 AND sha256 = $2',
        [tenantId, sha256],
      );
      const r = rows[0];
      return r && { sha256: r.sha256, contentType: r.content_type, bytes: r.bytes, data: r.data };
    },
  };
}
