import { Type } from '@sinclair/typebox';
import type { DocResponse, HttpRequest, Reply, Route } from '../../../http/types.js';
import { json } from '../../../http/types.js';
import { AppError, notFound } from '../../../shared/errors.js';
import { IMAGE_TYPES, imageTypeOf, MAX_IMAGE_BYTES, MEDIA_PATH, mediaUrl, sha256Hex } from '../../../shared/media.js';
import { SIGNED_HEADERS } from '../../contracts.js';
import type { Pool } from '../../db/pool.js';
import type { DeviceService } from '../devices/service.js';
import { createMediaRepo, type StoredImage } from './repo.js';

const ImageBytes = Type.String({
  contentEncoding: 'binary',
  description: "the image's bytes (at most MAX_IMAGE_BYTES)",
});
const Uploaded = Type.Object({
  sha256: Type.String(),
  url: Type.String(),
  contentType: Type.String(),
  bytes: Type.Integer(),
});
const IMAGE_ANSWERS: Record<number, DocResponse> = {
  200: { description: 'the bytes', contentType: 'application/octet-stream' },
  206: { description: 'the rest, from a `Range: bytes=N-`', contentType: 'application/octet-stream' },
};

/** `<sha256>.<ext>` as a menu names it; anything else names no image. */
const NAME = /^([0-9a-f]{64})\.(png|jpg|webp)$/;

/** An image's bytes; a `Range: bytes=N-` from a box resuming a download gets the rest (206). Other ranges: the whole. */
function imageReply(req: HttpRequest, image: StoredImage, ext: string): Reply {
  const headers = {
    'content-type': image.contentType,
    etag: `"${image.sha256}"`,
    'cache-control': 'private, max-age=31536000, immutable',
    'accept-ranges': 'bytes',
  };
  if (IMAGE_TYPES[ext as keyof typeof IMAGE_TYPES] !== image.contentType) throw notFound('image');
  const from = /^bytes=(\d{1,10})-$/.exec(req.headers.range ?? '')?.[1];
  const start = from === undefined ? 0 : Number(from);
  if (start > 0 && start < image.bytes) {
    return {
      status: 206,
      bytes: image.data.subarray(start),
      headers: { ...headers, 'content-range': `bytes ${start}-${image.bytes - 1}/${image.bytes}` },
    };
  }
  return { status: 200, bytes: image.data, headers };
}

/**
 * Menu images (docs/sync.md "Menu images"). Headquarters uploads the bytes (`POST /hq-api/api/media`, scope write):
 * the type comes from the bytes (PNG, JPEG, WebP), never from the request's content type; at most
 * MAX_IMAGE_BYTES; stored under their sha256, so the same image twice is one row. Boxes fetch the images their
 * menus name with a signed GET.
 */
export function mediaRoutes(pool: Pool, devices: DeviceService): Route[] {
  const repo = createMediaRepo(pool);
  const lookup = async (tenantId: string, name: string | undefined): Promise<{ image: StoredImage; ext: string }> => {
    const m = NAME.exec(name ?? '');
    const image = m ? await repo.get(tenantId, m[1]!) : undefined;
    if (!m || !image) throw notFound('image');
    return { image, ext: m[2]! };
  };
  return [
    {
      method: 'post',
      path: '/hq-api/api/media',
      auth: 'write',
      body: 'raw',
      // Documents the bytes; their type is read from them (imageTypeOf), never from the request's content type.
      schema: { body: ImageBytes },
      doc: {
        operationId: 'uploadMedia',
        summary: 'Upload a menu image (PNG, JPEG or WebP)',
        requestType: 'application/octet-stream',
        responses: {
          201: { description: 'stored', schema: Uploaded },
          200: { description: 'the same image was stored already', schema: Uploaded },
        },
      },
      async handle({ principal, body }) {
        const data = body as Buffer;
        if (data.length === 0)
          throw AppError.of('invalidBody', "the body must be the image's bytes (PNG, JPEG or WebP)");
        if (data.length > MAX_IMAGE_BYTES) {
          throw AppError.of(
            'payloadTooLarge',
            `an image may have at most ${MAX_IMAGE_BYTES} bytes; this one has ${data.length}`,
          );
        }
        const ext = imageTypeOf(data);
        if (!ext)
          throw AppError.of(
            'unsupportedMediaType',
            'the bytes are not a PNG, JPEG or WebP image (the type is read from the bytes)',
          );
        const sha256 = sha256Hex(data);
        const image = { sha256, contentType: IMAGE_TYPES[ext], bytes: data.length, data: Buffer.from(data) };
        const created = await repo.insert(principal.tenantId, image, principal.userId);
        return json(created ? 201 : 200, {
          sha256,
          url: mediaUrl(sha256, ext),
          contentType: image.contentType,
          bytes: image.bytes,
        });
      },
    },
    {
      method: 'get',
      path: '/hq-api/api/media/:name',
      auth: 'bearer',
      body: 'none',
      doc: {
        operationId: 'getHqMedia',
        summary: 'A menu image',
        params: { name: '<sha256>.<png|jpg|webp>' },
        responses: IMAGE_ANSWERS,
      },
      async handle({ req, principal }) {
        const { image, ext } = await lookup(principal.tenantId, req.params.name);
        return imageReply(req, image, ext);
      },
    },
    {
      method: 'get',
      path: `${MEDIA_PATH}/:name`,
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'getBoxMedia',
        summary: 'A menu image for a box (signed)',
        tag: 'sync-api',
        params: { name: '<sha256>.<png|jpg|webp>' },
        headers: SIGNED_HEADERS,
        responses: IMAGE_ANSWERS,
      },
      async handle({ req }) {
        const device = await devices.authenticate(req, '');
        const { image, ext } = await lookup(device.tenantId, req.params.name);
        return imageReply(req, image, ext);
      },
    },
  ];
}
