import { expect, test } from 'vitest';
import { imageTypeOf, mediaOfMenu, parseMediaUrl } from './media.js';

const sha = 'a'.repeat(64);

test('the type is read from the bytes: PNG with its IHDR, JPEG, WebP whose RIFF size fits; anything else is none', () => {
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
    Buffer.from('IHDR'),
    Buffer.alloc(17),
  ]);
  expect(imageTypeOf(png)).toBe('png');
  expect(imageTypeOf(png.subarray(0, 12))).toBeUndefined();
  expect(imageTypeOf(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16]))).toBe('jpg');
  expect(imageTypeOf(Buffer.from([0xff, 0xd8, 0x00]))).toBeUndefined();
  const webp = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 '), Buffer.alloc(8)]);
  webp.writeUInt32LE(webp.length - 8, 4);
  expect(imageTypeOf(webp)).toBe('webp');
  webp.writeUInt32LE(webp.length, 4);
  expect(imageTypeOf(webp)).toBeUndefined();
  expect(imageTypeOf(Buffer.from('GIF89a'))).toBeUndefined();
  expect(imageTypeOf(Buffer.from('<svg/>'))).toBeUndefined();
});

test("a menu names a central image as /media/<sha256>.<ext>; other URLs are not the central's", () => {
  expect(parseMediaUrl(`/media/${sha}.png`)).toEqual({ sha256: sha, ext: 'png' });
  for (const url of [
    '/media/zurek.jpg',
    `/media/${sha}.gif`,
    `/media/${sha.toUpperCase()}.png`,
    `https://cdn/media/${sha}.png`,
    `/media/${sha}.png?x`,
  ]) {
    expect(parseMediaUrl(url)).toBeUndefined();
  }
  const root = {
    kind: 'svc/group/category',
    items: [
      {
        kind: 'svc/product',
        id: 'a',
        details: {
          media: [
            { url: `/media/${sha}.png`, name: 'MAIN_IMG' },
            { url: '', name: 'DETAILS_IMG' },
          ],
        },
      },
      {
        kind: 'svc/group/category',
        items: [
          {
            kind: 'svc/product',
            id: 'b',
            details: {
              media: [
                { url: `/media/${sha}.png`, name: 'MAIN_IMG' },
                { url: `/media/${'b'.repeat(64)}.webp`, name: 'DETAILS_IMG' },
                { url: '/media/zurek.jpg', name: 'X' },
              ],
            },
          },
        ],
      },
    ],
  };
  expect(mediaOfMenu(root)).toEqual([
    { sha256: sha, ext: 'png' },
    { sha256: 'b'.repeat(64), ext: 'webp' },
  ]);
});
