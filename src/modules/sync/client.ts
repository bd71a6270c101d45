import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BATCH_MEDIA_TYPE, PATHS, type SignedRequestHeaders, signRequest } from '../../shared/sync-protocol.js';
import type {
  BatchAck,
  EnrolRequest,
  EnrolResponse,
  HelloRequest,
  HelloResponse,
  StandbyLeaseRequest,
  SyncErrorBody,
  TailResponse,
} from '../../shared/sync-messages.js';
import type { CatalogueResponse } from '../../shared/catalogue-protocol.js';
import type { Device } from './enrolment/device.js';
import type { Signer } from './enrolment/signer.js';

/** The central answered with an error; `status` 0 when it could not be reached at all. */
export class CentralError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body?: SyncErrorBody,
    /** Seconds from a 429 or 503 `Retry-After`. */
    readonly retryAfterS?: number,
  ) {
    super(message);
  }
}

export interface ClientOptions {
  requestTimeoutMs: number;
  /** Aborted when the box stops: an in-flight request ends at once. */
  signal?: AbortSignal;
}

/** One HTTP exchange: the body written part by part (a batch is never joined into one buffer). */
function exchange(
  url: string,
  method: string,
  headers: Record<string, string>,
  parts: Buffer[],
  options: ClientOptions,
): Promise<{ status: number; retryAfter: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const length = parts.reduce((n, p) => n + p.length, 0);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const signal = AbortSignal.any([
      AbortSignal.timeout(options.requestTimeoutMs),
      ...(options.signal ? [options.signal] : []),
    ]);
    const req = send(target, { method, headers: { ...headers, 'content-length': String(length) }, signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        // An answer is a small JSON object or a tail page (at most a few MiB): past that, not a central's answer.
        if (size > MAX_ANSWER_BYTES) req.destroy(new Error('answer too large'));
        else chunks.push(c);
      });
      res.on('end', () => {
        const retryAfter = res.headers['retry-after'];
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
          text: Buffer.concat(chunks).toString('utf8'),
        });
      });
      res.on('error', (err) => reject(new CentralError(0, `central stopped answering (${(err as Error).message})`)));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      const cause =
        err.name === 'AbortError' ? (options.signal?.aborted ? 'stopping' : 'timeout') : (err.code ?? err.message);
      reject(new CentralError(0, `central unreachable (${cause})`));
    });
    for (const part of parts) req.write(part);
    req.end();
  });
}

const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

async function call<T>(
  url: string,
  method: string,
  headers: Record<string, string>,
  parts: Buffer[],
  options: ClientOptions,
): Promise<T> {
  const { status, retryAfter, text } = await exchange(url, method, headers, parts, options);
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (status >= 200 && status < 300) {
    if (body === undefined) throw new CentralError(502, `central answered ${status} without a JSON body`);
    return body as T;
  }
  const retry = retryAfterSeconds(retryAfter);
  const given = (body as SyncErrorBody | undefined)?.message;
  const message = typeof given === 'string' ? given.slice(0, 200) : text.slice(0, 200) || `status ${status}`;
  throw new CentralError(status, `central answered ${status}: ${message}`, body as SyncErrorBody | undefined, retry);
}

/** Retry-After in seconds (RFC 9110 10.2.3); absent or unreadable, the central loop's own backoff applies. */
export const retryAfterSeconds = (header: string | string[] | undefined): number | undefined =>
  typeof header === 'string' && /^\d{1,6}$/.test(header.trim()) ? Number(header) : undefined;

const json = (body: string): Buffer[] => [Buffer.from(body, 'utf8')];

/** The challenge of a hello refused as stale (`requestStale`, args[0]); undefined for any other failure. */
function staleChallenge(err: unknown): string | undefined {
  if (!(err instanceof CentralError) || err.status !== 401) return undefined;
  const code = err.body?.codes?.[0];
  return code?.code === 'requestStale' && typeof code.args?.[0] === 'string' ? code.args[0] : undefined;
}

/**
 * The clock signed requests are stamped with (docs/sync.md "Signed requests"): the wall clock as it was at the last
 * hello the central took, moved on by the monotonic clock. The central checks a stamp against the offset that hello
 * measured, so a wall clock set since (NTP after a 1970 start, or back a year) changes nothing until the next
 * hello, which measures the new offset; before the first, the wall clock.
 */
let helloClock: { wallMs: number; monoMs: number } | undefined;
export const signingTimeMs = (): number =>
  helloClock ? helloClock.wallMs + (performance.now() - helloClock.monoMs) : Date.now();

/** Headers of a request signed by the device (the catalogue's poll, the tail, images, releases, the lease). */
export function signedHeaders(
  device: Device,
  sign: Signer,
  method: string,
  pathAndQuery: string,
  body: string,
  stamp: { timestampMs: number; challenge?: string } = { timestampMs: signingTimeMs() },
): Promise<SignedRequestHeaders> {
  const request = { method, pathAndQuery, tenant: device.tenant, deviceId: device.deviceId, body };
  return signRequest(request, sign, stamp.timestampMs, stamp.challenge);
}

const base = (central: string) => central.replace(/\/+$/, '');

/** A JSON body POSTed to `path`, signed by the device over its exact bytes (hello, the standby lease). */
async function signedPost<T>(
  device: Device,
  sign: Signer,
  path: string,
  req: unknown,
  options: ClientOptions,
  stamp?: { timestampMs: number; challenge?: string },
) {
  const body = JSON.stringify(req);
  const headers = await signedHeaders(device, sign, 'POST', path, body, stamp);
  return call<T>(
    `${base(device.central)}${path}`,
    'POST',
    { ...headers, 'content-type': 'application/json' },
    json(body),
    options,
  );
}

/** The box's calls to its central (docs/sync.md "Sync to the central node"). */
export const centralClient = {
  enrol: (central: string, req: EnrolRequest, options: ClientOptions): Promise<EnrolResponse> =>
    call(
      `${base(central)}${PATHS.enrol}`,
      'POST',
      { 'content-type': 'application/json' },
      json(JSON.stringify(req)),
      options,
    ),

  /**
   * A hello, stamped with the wall clock: it measures the offset the central checks other requests against. One
   * refused as stale (the clock was set since the last) is sent again at once with the challenge the refusal gave.
   */
  async hello(device: Device, sign: Signer, req: HelloRequest, options: ClientOptions): Promise<HelloResponse> {
    const clock = { wallMs: Date.now(), monoMs: performance.now() };
    let answer: HelloResponse;
    try {
      answer = await signedPost(device, sign, PATHS.hello, req, options, { timestampMs: clock.wallMs });
    } catch (err) {
      const challenge = staleChallenge(err);
      if (challenge === undefined) throw err;
      answer = await signedPost(device, sign, PATHS.hello, req, options, { timestampMs: clock.wallMs, challenge });
    }
    helloClock = clock;
    return answer;
  },

  /**
   * A standby pair's lease (docs/sync.md "The standby lease"): the answer's body, unchecked (a 200 is a grant, a
   * 409 a CentralError whose body is the refusal); src/modules/sync/standby-lease.ts reads both.
   */
  standbyLease: (device: Device, sign: Signer, req: StandbyLeaseRequest, options: ClientOptions): Promise<unknown> =>
    signedPost(device, sign, PATHS.standbyLease, req, options),

  /** A batch as parts (src/shared/sync-protocol.ts batchParts), written to the socket one after another. */
  postBatch: (device: Device, parts: Buffer[], options: ClientOptions): Promise<BatchAck> =>
    call(`${base(device.central)}${PATHS.batches}`, 'POST', { 'content-type': BATCH_MEDIA_TYPE }, parts, options),

  /** The catalogue's long poll: answered at once when something changed after `after`, else within `waitS`. */
  async catalogue(
    device: Device,
    sign: Signer,
    q: { after: number; waitS: number; snapshot: boolean; release?: string },
    options: ClientOptions,
  ): Promise<CatalogueResponse> {
    const path =
      `${PATHS.catalogue}?after=${q.after}&wait=${q.waitS}${q.snapshot ? '&snapshot=1' : ''}` +
      (q.release === undefined ? '' : `&release=${encodeURIComponent(q.release)}`);
    const headers = await signedHeaders(device, sign, 'GET', path, '');
    return call(`${base(device.central)}${path}`, 'GET', headers, [], options);
  },

  async tail(
    device: Device,
    sign: Signer,
    after: number,
    limit: number,
    options: ClientOptions,
  ): Promise<TailResponse> {
    const path = `${PATHS.events}?after=${after}&limit=${limit}`;
    const headers = await signedHeaders(device, sign, 'GET', path, '');
    return call(`${base(device.central)}${path}`, 'GET', headers, [], options);
  },
};
