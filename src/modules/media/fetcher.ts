import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from '../../log.js';
import { type ImageExt, MAX_IMAGE_BYTES, MEDIA_PATH, sha256Hex } from '../../shared/media.js';
import { requestSigningText, signDetached } from '../../shared/sync-protocol.js';
import { type Device, loadDevice } from '../sync/enrolment/device.js';
import type { MediaRepo } from './repo.js';
import type { MediaStore } from './store.js';

export interface FetcherOptions {
  maxBytes: number;
  requestTimeoutMs: number;
  retryMinMs: number;
  retryMaxMs: number;
}

export interface FetcherDeps {
  dataDir: string;
  repo: MediaRepo;
  store: MediaStore;
  log: Logger;
  options: FetcherOptions;
  /** True while the data disk is below storage.minFreeBytes: no download starts. */
  diskFull(): boolean;
}

class DownloadError extends Error {}

/**
 * Downloads the central images the box's menus name (docs/sync.md "Menu images"), one at a time, beside the puller:
 * woken after every catalogue change and at start. Each download is appended to a partial file and flushed as it
 * arrives, so after an outage or a restart it resumes from the bytes on disk (`Range: bytes=N-`); the whole is
 * checked against the sha256 its name carries before one rename makes it the image. Images no menu names any
 * more are removed. At most `maxBytes` of images are kept: past that, images later in menu order are not fetched.
 */
export function createMediaFetcher(deps: FetcherDeps) {
  const { log, store, options } = deps;
  const abort = new AbortController();
  let stopped = false;
  let pending = true;
  let running: Promise<void> | undefined;
  let wakeSleep: (() => void) | undefined;
  let warnedFull = false;

  const sleep = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    wakeSleep = () => {
      clearTimeout(timer);
      resolve();
    };
  });

  /** One pass: collect, then fetch what is missing. Throws on the first failed download (retried after a delay). */
  async function pass(device: Device): Promise<{ fetched: number; removed: number }> {
    const wanted = deps.repo.wanted(device.tenant, device.venue);
    const removed = store.collect(new Set(wanted.map((w) => w.sha256)));
    let fetched = 0;
    for (const image of wanted) {
      if (stopped) break;
      if (store.has(image.sha256, image.ext)) continue;
      if (store.usedBytes() >= options.maxBytes) {
        if (!warnedFull) log.warn({ maxBytes: options.maxBytes }, 'menu images fill sync.mediaMaxBytes: later images are not downloaded');
        warnedFull = true;
        break;
      }
      if (deps.diskFull()) throw new DownloadError('the data disk is full (storage.minFreeBytes)');
      await download(device, image.sha256, image.ext);
      fetched++;
    }
    if (fetched > 0 || removed > 0) log.info({ fetched, removed, wanted: wanted.length }, 'menu images from the central');
    return { fetched, removed };
  }

  async function download(device: Device, sha256: string, ext: ImageExt): Promise<void> {
    const from = store.partialBytes(sha256, ext);
    const status = await get(device, sha256, ext, from);
    if (status !== 200 && status !== 206) throw new DownloadError(`central answered ${status} for image ${sha256.slice(0, 12)}`);
    const whole = await store.readPartial(sha256, ext);
    if (whole.length > MAX_IMAGE_BYTES || sha256Hex(whole) !== sha256) {
      store.dropPartial(sha256, ext);
      throw new DownloadError(`image ${sha256.slice(0, 12)} does not hash to its name; downloading it again`);
    }
    store.complete(sha256, ext);
  }

  /**
   * A GET signed by the device (as the catalogue's poll), asking for the bytes after the `from` already on disk.
   * What arrives is appended to the partial file, also when the answer is cut off: the next attempt asks for the
   * rest. A 200 (the whole, not the rest) starts the partial file again.
   */
  function get(device: Device, sha256: string, ext: ImageExt, from: number): Promise<number> {
    const path = `${MEDIA_PATH}/${sha256}.${ext}`;
    const signature = signDetached(Buffer.from(requestSigningText('GET', path, device.tenant, device.deviceId, ''), 'utf8'), device.secretKey);
    const headers: Record<string, string> = {
      'x-tenant': device.tenant, 'x-device': device.deviceId, 'x-signature': Buffer.from(signature).toString('base64'),
      ...(from > 0 ? { range: `bytes=${from}-` } : {}),
    };
    const target = new URL(`${device.central.replace(/\/+$/, '')}${path}`);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const signal = AbortSignal.any([AbortSignal.timeout(options.requestTimeoutMs), abort.signal]);
    return new Promise((resolve, reject) => {
      const req = send(target, { method: 'GET', headers, signal }, (res) => {
        const status = res.statusCode ?? 0;
        const keeps = status === 200 || (status === 206 && from > 0);
        if (status === 200) store.dropPartial(sha256, ext);
        let size = from;
        let chunks: Buffer[] = [];
        const flush = () => {
          if (keeps && chunks.length > 0) store.appendPartial(sha256, ext, Buffer.concat(chunks));
          chunks = [];
        };
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_IMAGE_BYTES) req.destroy(new DownloadError('the answer is larger than an image may be'));
          else chunks.push(c);
        });
        res.on('end', () => {
          flush();
          resolve(status);
        });
        res.on('error', (err) => {
          try {
            flush();
          } catch (e) {
            log.warn({ err: (e as Error).message }, 'keeping part of an image failed');
          }
          reject(new DownloadError(`download cut off (${err.message})`));
        });
      });
      req.on('error', (err: NodeJS.ErrnoException) => reject(new DownloadError(`central unreachable (${err.code ?? err.message})`)));
      req.end();
    });
  }

  async function loop(): Promise<void> {
    let attempt = 0;
    while (!stopped) {
      if (!pending) {
        await sleep(60_000);
        continue;
      }
      const device = loadDevice(deps.dataDir);
      if (!device) {
        await sleep(5000);
        continue;
      }
      pending = false;
      try {
        await pass(device);
        attempt = 0;
      } catch (err) {
        if (stopped) break;
        pending = true;
        attempt++;
        const cap = Math.min(options.retryMaxMs, options.retryMinMs * 2 ** Math.min(attempt - 1, 30));
        const delay = Math.max(options.retryMinMs / 4, Math.random() * cap);
        log.warn({ err: (err as Error).message, retryInMs: Math.round(delay) }, 'menu image download failed; retrying');
        await sleep(delay);
      }
    }
  }

  return {
    start(): void {
      running ??= loop().catch((err: unknown) => log.error({ err }, 'menu image fetcher stopped'));
    },
    /** The menus changed (or the box enrolled): look again. */
    wake(): void {
      pending = true;
      wakeSleep?.();
    },
    async stop(): Promise<void> {
      stopped = true;
      abort.abort();
      wakeSleep?.();
      await running;
    },
  };
}
