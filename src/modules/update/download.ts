import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log.js';
import { digestOf } from '../../shared/files.js';
import { ReleaseRefused } from '../../shared/release.js';
import { RELEASE_PATHS, type ReleaseManifest, type ReleaseTarget } from '../../shared/release-schemas.js';
import { applyPatch } from '../../shared/release-patch.js';
import { CentralError, type ClientOptions, retryAfterSeconds, signedHeaders } from '../sync/client.js';
import type { Device } from '../sync/enrolment/device.js';
import { deviceSigner } from '../sync/enrolment/signer.js';
import { downloadsDir } from './layout.js';

/** Bytes asked for in one request: the central answers ranges of at most 8 MiB. */
const RANGE_BYTES = 1024 * 1024;

export interface DownloadDeps {
  /** Undefined on a box not enrolled: only a release already on the disk (from a stick) is at hand. */
  device: Device | undefined;
  client: ClientOptions;
  /** The release directory (docs/operations.md "Updating boxes"); downloads go to DIR/downloads. */
  dir: string;
  log: Logger;
  /** Average rate the download keeps under (0: as fast as the line goes): updates never crowd out orders' sync. */
  bytesPerSecond: number;
  /** Throws ReleaseRefused('disk') when the disk cannot take `bytes` more. */
  reserve(bytes: number): void;
  progress(bytes: number, total: number): void;
}

/** Throws ReleaseRefused unless `file` has the manifest's size and sha256. */
export async function verifyBinary(file: string, manifest: Pick<ReleaseManifest, 'size' | 'sha256'>): Promise<void> {
  const size = statSync(file).size;
  if (size !== manifest.size) {
    throw new ReleaseRefused('size', `the binary has ${size} bytes; its manifest says ${manifest.size}`);
  }
  if ((await digestOf(file)).sha256 !== manifest.sha256) {
    throw new ReleaseRefused('hash', "the binary's sha256 is not its manifest's");
  }
}

export interface Obtained {
  file: string;
  /** Bytes that came over the network for it (a resumed download: since the restart). */
  fetched: number;
  /** Made from a patch against this box's own binary. */
  patched: boolean;
}

/**
 * The release's binary in DIR/downloads, verified against its signed manifest (whose signature the caller
 * checked): from a patch against this box's own binary when the central offers one (a few MB instead of the
 * whole), else the whole. Every part is asked for by range and appended as it arrives, so a download cut off by
 * an outage or a restart resumes where it stopped; nothing is kept that does not verify.
 */
export async function obtainRelease(
  deps: DownloadDeps,
  target: ReleaseTarget,
  manifest: ReleaseManifest,
  own: { binary: string; sha256: string | undefined },
): Promise<Obtained> {
  const counted = { bytes: 0 };
  const dir = downloadsDir(deps.dir);
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const done = join(dir, `${manifest.sha256}.bin`);
  if (existsSync(done)) {
    try {
      await verifyBinary(done, manifest);
      return { file: done, fetched: 0, patched: false };
    } catch {
      rmSync(done, { force: true });
    }
  }
  const { device } = deps;
  if (!device) throw new CentralError(0, 'the box is not enrolled at a central');
  const online = { ...deps, device };
  const part = join(dir, `${manifest.sha256}.part`);
  // The paths are this program's own (RELEASE_PATHS), never a URL from the central: the device's signed requests go
  // to its central only.
  const patch = target.patches.find((p) => p.from === own.sha256 && p.size < manifest.size);
  if (patch && !existsSync(part)) {
    const patchFile = join(dir, `${manifest.sha256}.from-${patch.from}.patch`);
    try {
      deps.reserve(patch.size + manifest.size);
      await fetchRanges(online, RELEASE_PATHS.patch(manifest.sha256, patch.from), patchFile, patch.size, counted);
      const out = `${part}.patched`;
      await applyPatch(own.binary, patchFile, out, { maxOutputBytes: manifest.size });
      await verifyBinary(out, manifest);
      renameSync(out, done);
      rmSync(patchFile, { force: true });
      return { file: done, fetched: counted.bytes, patched: true };
    } catch (err) {
      if (deps.client.signal?.aborted || err instanceof CentralError || (err as ReleaseRefused).reason === 'disk')
        throw err;
      // A patch that does not apply or does not yield the release: the whole binary instead.
      deps.log.warn({ err: (err as Error).message }, 'the update patch did not give the release; downloading it whole');
      rmSync(patchFile, { force: true });
      rmSync(`${part}.patched`, { force: true });
    }
  }
  deps.reserve(manifest.size - (existsSync(part) ? statSync(part).size : 0));
  await fetchRanges(online, RELEASE_PATHS.binary(manifest.sha256), part, manifest.size, counted);
  try {
    await verifyBinary(part, manifest);
  } catch (err) {
    rmSync(part, { force: true });
    throw err;
  }
  renameSync(part, done);
  return { file: done, fetched: counted.bytes, patched: false };
}

/** GETs `path` of `total` bytes into `file` range by range, from the bytes it holds already. */
async function fetchRanges(
  deps: DownloadDeps & { device: Device },
  path: string,
  file: string,
  total: number,
  counted: { bytes: number },
): Promise<void> {
  let have = existsSync(file) ? statSync(file).size : 0;
  if (have > total) {
    rmSync(file, { force: true });
    have = 0;
  }
  const started = Date.now();
  const startedAt = have;
  const fd = openSync(file, 'a', 0o640);
  try {
    while (have < total) {
      if (deps.client.signal?.aborted) throw new CentralError(0, 'stopping');
      const end = Math.min(total, have + RANGE_BYTES) - 1;
      const bytes = await rangeGet(deps, path, have, end);
      writeSync(fd, bytes);
      fsyncSync(fd);
      have += bytes.length;
      counted.bytes += bytes.length;
      deps.progress(have, total);
      if (deps.bytesPerSecond > 0) {
        const due = ((have - startedAt) / deps.bytesPerSecond) * 1000 - (Date.now() - started);
        if (due > 0) await sleep(due, undefined, { signal: deps.client.signal }).catch(() => undefined);
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** One signed `Range: bytes=start-end` GET; exactly those bytes, or a throw. */
async function rangeGet(
  deps: DownloadDeps & { device: Device },
  path: string,
  start: number,
  end: number,
): Promise<Buffer> {
  const { device, client } = deps;
  const headers = await signedHeaders(device, deviceSigner(device.secretKey), 'GET', path, '');
  const target = new URL(`${device.central.replace(/\/+$/, '')}${path}`);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const signal = AbortSignal.any([
    AbortSignal.timeout(client.requestTimeoutMs),
    ...(client.signal ? [client.signal] : []),
  ]);
  const want = end - start + 1;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      { method: 'GET', headers: { ...headers, range: `bytes=${start}-${end}` }, signal },
      (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > want && status === 206) req.destroy(new Error('the central sent more than the range'));
          else if (size <= Math.max(want, 64 * 1024)) chunks.push(c);
        });
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          if (status === 206 && body.length === want) return resolve(body);
          const retry = res.headers['retry-after'];
          const text =
            status === 206 ? `a range of ${body.length} bytes instead of ${want}` : body.toString('utf8', 0, 200);
          reject(
            new CentralError(
              status === 206 ? 502 : status,
              `central answered ${status} for ${path} bytes ${start}-${end}: ${text}`,
              undefined,
              retryAfterSeconds(typeof retry === 'string' ? retry : undefined),
            ),
          );
        });
        res.on('error', (err) => reject(new CentralError(0, `download cut off (${err.message})`)));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        new CentralError(
          0,
          `central unreachable (${err.name === 'AbortError' ? 'timeout or stopping' : (err.code ?? err.message)})`,
        ),
      ),
    );
    req.end();
  });
}
