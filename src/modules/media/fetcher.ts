import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from '../../log.js';
import { type ImageExt, MAX_IMAGE_BYTES, MEDIA_PATH, sha256Hex } from '../../shared/media.js';
import { createCentralLoop, type StepContext } from '../sync/central-loop.js';
import { CentralError, type ClientOptions, retryAfterSeconds, signedHeaders } from '../sync/client.js';
import { type Device, loadDevice } from '../sync/enrolment/device.js';
import { deviceSigner } from '../sync/enrolment/signer.js';
import type { MediaRepo } from './repo.js';
import type { MediaStore } from './store.js';

export interface FetcherOptions {
  maxBytes: number;
  requestTimeoutMs: number;
  retryMinMs: number;
  retryMaxMs: number;
  /** How often a box that is not enrolled looks for its device file. */
  enrolPollMs: number;
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
 * Waiting for enrolment, the backoff, Retry-After and a refused device are the central loop's (docs/sync.md
 * "Talking to the central").
 */
export function createMediaFetcher(deps: FetcherDeps) {
  const { log, store, options } = deps;
  let warnedFull = false;

  /** One pass: collect, then fetch what is missing. Throws on the first failed download (retried after a delay). */
  async function pass(device: Device, client: ClientOptions): Promise<{ fetched: number; removed: number }> {
    const wanted = deps.repo.wanted(device.tenant, device.venue);
    const removed = store.collect(new Set(wanted.map((w) => w.sha256)));
    let fetched = 0;
    for (const image of wanted) {
      if (client.signal?.aborted) break;
      if (store.has(image.sha256, image.ext)) continue;
      if (store.usedBytes() >= options.maxBytes) {
        if (!warnedFull)
          log.warn(
            { maxBytes: options.maxBytes },
            'menu images fill sync.mediaMaxBytes: later images are not downloaded',
          );
        warnedFull = true;
        break;
      }
      if (deps.diskFull()) throw new DownloadError('the data disk is full (storage.minFreeBytes)');
      await download(device, image.sha256, image.ext, client);
      fetched++;
    }
    if (fetched > 0 || removed > 0)
      log.info({ fetched, removed, wanted: wanted.length }, 'menu images from the central');
    return { fetched, removed };
  }

  async function download(device: Device, sha256: string, ext: ImageExt, client: ClientOptions): Promise<void> {
    const from = store.partialBytes(sha256, ext);
    const { status, retryAfter } = await get(device, sha256, ext, from, client);
    if (status !== 200 && status !== 206) {
      throw new CentralError(
        status,
        `central answered ${status} for image ${sha256.slice(0, 12)}`,
        undefined,
        retryAfterSeconds(retryAfter),
      );
    }
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
  async function get(
    device: Device,
    sha256: string,
    ext: ImageExt,
    from: number,
    client: ClientOptions,
  ): Promise<{ status: number; retryAfter: string | undefined }> {
    const path = `${MEDIA_PATH}/${sha256}.${ext}`;
    const headers: Record<string, string> = {
      ...(await signedHeaders(device, deviceSigner(device.secretKey), 'GET', path, '')),
      ...(from > 0 ? { range: `bytes=${from}-` } : {}),
    };
    const target = new URL(`${device.central.replace(/\/+$/, '')}${path}`);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const signal = AbortSignal.any([
      AbortSignal.timeout(client.requestTimeoutMs),
      ...(client.signal ? [client.signal] : []),
    ]);
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
          const retryAfter = res.headers['retry-after'];
          resolve({ status, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined });
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
      req.on('error', (err: NodeJS.ErrnoException) =>
        reject(new CentralError(0, `central unreachable (${err.code ?? err.message})`)),
      );
      req.end();
    });
  }

  const loop = createCentralLoop({
    options,
    loadDevice: () => loadDevice(deps.dataDir),
    // One pass, then nothing until the menus change (wake()).
    step: async ({ device, client }: StepContext) => {
      await pass(device, client);
      return undefined;
    },
    retryable: (err) => err instanceof DownloadError,
    failed: (err, delay) =>
      log.warn(
        { err: (err as Error).message, status: (err as CentralError).status, retryInMs: delay },
        'menu image download failed; retrying',
      ),
  });

  return {
    run: loop.run,
    /** The menus changed (or the box enrolled): look again. */
    wake: loop.wake,
    stop: loop.stop,
  };
}
