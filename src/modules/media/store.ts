import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ImageExt } from '../../shared/media.js';

/** Images as files: `DATA_DIR/media/<sha256>.<ext>`, and downloads under way in `DATA_DIR/media/partial/`. */
export const MEDIA_DIR = 'media';
const NAME = /^([0-9a-f]{64})\.(png|jpg|webp)$/;

export function createMediaStore(dataDir: string) {
  const dir = join(dataDir, MEDIA_DIR);
  const partialDir = join(dir, 'partial');
  const ensure = () => mkdirSync(partialDir, { recursive: true, mode: 0o750 });
  const fileName = (sha256: string, ext: ImageExt) => `${sha256}.${ext}`;
  const list = (d: string): string[] => {
    try {
      return readdirSync(d).filter((n) => NAME.test(n));
    } catch {
      return [];
    }
  };
  const size = (path: string): number => {
    try {
      return statSync(path).size;
    } catch {
      return 0;
    }
  };
  const syncDir = (d: string) => {
    const fd = openSync(d, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  };

  return {
    /** Bytes of every complete image and partial download: what counts against sync.mediaMaxBytes. */
    usedBytes: (): number =>
      list(dir).reduce((n, f) => n + size(join(dir, f)), 0) +
      list(partialDir).reduce((n, f) => n + size(join(partialDir, f)), 0),
    has: (sha256: string, ext: ImageExt): boolean => size(join(dir, fileName(sha256, ext))) > 0,
    /** How much of a download is on disk already (it resumes from there). */
    partialBytes: (sha256: string, ext: ImageExt): number => size(join(partialDir, fileName(sha256, ext))),
    readPartial: (sha256: string, ext: ImageExt): Promise<Buffer> => readFile(join(partialDir, fileName(sha256, ext))),
    /** Appends a received part to the download and flushes it to disk (a power cut keeps what was written). */
    appendPartial(sha256: string, ext: ImageExt, bytes: Buffer): void {
      ensure();
      const fd = openSync(join(partialDir, fileName(sha256, ext)), 'a', 0o640);
      try {
        writeSync(fd, bytes);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    },
    dropPartial(sha256: string, ext: ImageExt): void {
      try {
        unlinkSync(join(partialDir, fileName(sha256, ext)));
      } catch {
        // already gone
      }
    },
    /** A verified download becomes the image: one rename (atomic), then the directory's entry is made durable. */
    complete(sha256: string, ext: ImageExt): void {
      renameSync(join(partialDir, fileName(sha256, ext)), join(dir, fileName(sha256, ext)));
      syncDir(dir);
    },
    /** Removes every image and partial download whose sha256 is not wanted; returns how many files went. */
    collect(wanted: ReadonlySet<string>): number {
      let removed = 0;
      for (const d of [dir, partialDir]) {
        for (const f of list(d)) {
          if (wanted.has(NAME.exec(f)![1]!)) continue;
          try {
            unlinkSync(join(d, f));
            removed++;
          } catch {
            // removed meanwhile
          }
        }
      }
      return removed;
    },
    /** The bytes of a complete image, or undefined when the box does not hold it. */
    async read(name: string): Promise<Buffer | undefined> {
      if (!NAME.test(name)) return undefined;
      try {
        return await readFile(join(dir, name));
      } catch {
        return undefined;
      }
    },
  };
}
export type MediaStore = ReturnType<typeof createMediaStore>;
