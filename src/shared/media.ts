/**
 * Menu images (docs/sync.md "Menu images"): uploaded to the central by headquarters, stored content-addressed, named by
 * a menu's `details.media[].url` as `/media/<sha256>.<ext>`, downloaded by every box whose menus name them and
 * served by the box at that same path. Both sides import this file.
 */
import { createHash } from 'node:crypto';

/** The largest image headquarters may upload (and a box downloads). */
export const MAX_IMAGE_BYTES = 2 * 1024 * 1024;

export const IMAGE_TYPES = {
  png: 'image/png',
  jpg: 'image/jpeg',
  webp: 'image/webp',
} as const;
export type ImageExt = keyof typeof IMAGE_TYPES;

/** A content-addressed image's URL path: what a menu names and the box serves. Other `/media/...` URLs are not the central's. */
export const MEDIA_URL = /^\/media\/([0-9a-f]{64})\.(png|jpg|webp)$/;

/** The box downloads an image from its central here (a request signed by the device, like the catalogue's poll). */
export const MEDIA_PATH = '/sync-api/api/media';

export const mediaUrl = (sha256: string, ext: ImageExt): string => `/media/${sha256}.${ext}`;

export function parseMediaUrl(url: string): { sha256: string; ext: ImageExt } | undefined {
  const m = MEDIA_URL.exec(url);
  return m ? { sha256: m[1]!, ext: m[2] as ImageExt } : undefined;
}

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/**
 * The image's type by its first bytes, never by what a client claims: PNG's 8-byte signature followed by its
 * IHDR chunk, JPEG's SOI marker and a marker segment (FF D8 FF), WebP's RIFF container whose size field matches
 * the bytes and whose form type is WEBP. Undefined for anything else.
 */
export function imageTypeOf(bytes: Uint8Array): ImageExt | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 24 && b.subarray(0, 8).equals(PNG_SIGNATURE) && b.toString('latin1', 12, 16) === 'IHDR') return 'png';
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpg';
  if (
    b.length >= 16 &&
    b.toString('latin1', 0, 4) === 'RIFF' &&
    b.toString('latin1', 8, 12) === 'WEBP' &&
    b.readUInt32LE(4) + 8 === b.length
  )
    return 'webp';
  return undefined;
}
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Every central image a menu tree names (its products' `details.media[].url`), in tree order, once each. */
export function mediaOfMenu(root: unknown): { sha256: string; ext: ImageExt }[] {
  const found = new Map<string, { sha256: string; ext: ImageExt }>();
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    const n = node as { details?: { media?: unknown }; items?: unknown };
    if (Array.isArray(n.details?.media)) {
      for (const m of n.details.media as { url?: unknown }[]) {
        const parsed = typeof m?.url === 'string' ? parseMediaUrl(m.url) : undefined;
        if (parsed && !found.has(parsed.sha256)) found.set(parsed.sha256, parsed);
      }
    }
    if (Array.isArray(n.items)) n.items.forEach(walk);
  };
  walk(root);
  return [...found.values()];
}
