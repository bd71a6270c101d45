import type { Route } from '../../http/types.js';
import { notFound } from '../../shared/errors.js';
import { IMAGE_TYPES, parseMediaUrl } from '../../shared/media.js';
import type { MediaStore } from './store.js';

/** A content-addressed name never changes its bytes: a year, immutable (RFC 8246). */
const CACHE = 'public, max-age=31536000, immutable';

/**
 * The menu images this box holds, at the URL the menu names (`/media/<sha256>.<ext>`), for the kiosks and
 * screens on the venue's network (docs/sync.md "Menu images"). No token: an `<img>` cannot send one, and the images
 * are what the menu shows anyway. ETag is the sha256; `If-None-Match` gets 304; HEAD the headers alone.
 */
export function mediaRoutes(store: MediaStore): Route[] {
  return [
    {
      method: 'get',
      path: '/media/:name',
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'getMediaImage',
        summary:
          'A menu image the box holds, at the URL the menu names (404 notFound: not here); ETag, 304 on If-None-Match',
        tag: 'menus',
        params: { name: '<sha256>.<png|jpg|webp>' },
        headers: [
          {
            name: 'If-None-Match',
            required: false,
            description: 'an ETag the client holds (`"<sha256>"`, or `*`): 304 when it is this image',
          },
        ],
        responses: {
          200: {
            description: 'the image, cached for a year (immutable)',
            contentType: 'image/*',
            headers: ['ETag', 'Cache-Control'],
          },
          304: {
            description: 'not modified: If-None-Match named its ETag; no body',
            headers: ['ETag', 'Cache-Control'],
          },
        },
      },
      async handle({ req }) {
        const image = parseMediaUrl(`/media/${req.params.name ?? ''}`);
        const bytes = image && (await store.read(`${image.sha256}.${image.ext}`));
        if (!image || !bytes) throw notFound('image');
        const etag = `"${image.sha256}"`;
        const headers = { etag, 'cache-control': CACHE };
        const match = req.headers['if-none-match'];
        if (
          match !== undefined &&
          (match.trim() === '*' || match.split(',').some((t) => t.trim().replace(/^W\//, '') === etag))
        ) {
          return { status: 304, headers };
        }
        return { status: 200, bytes, headers: { ...headers, 'content-type': IMAGE_TYPES[image.ext] } };
      },
    },
  ];
}
