import {
  BATCH_MEDIA_TYPE, type BatchAck, type EnrolRequest, type EnrolResponse, type HelloRequest, type HelloResponse, PATHS,
  requestSigningText, type SyncErrorBody, type TailResponse,
} from '../../shared/sync-protocol.js';
import type { Device } from './device.js';
import type { Signer } from './signer.js';

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

async function call<T>(url: string, init: RequestInit, options: ClientOptions): Promise<T> {
  const signals = [AbortSignal.timeout(options.requestTimeoutMs), ...(options.signal ? [options.signal] : [])];
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.any(signals) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    throw new CentralError(0, `central unreachable (${cause})`);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw new CentralError(0, `central stopped answering (${(err as Error).name})`);
  }
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (res.ok) {
    if (body === undefined) throw new CentralError(502, `central answered ${res.status} without a JSON body`);
    return body as T;
  }
  // Retry-After in seconds (RFC 9110 10.2.3); absent or unreadable, the sender's own backoff applies.
  const header = res.headers.get('retry-after');
  const retry = header !== null && /^\d{1,6}$/.test(header.trim()) ? Number(header) : undefined;
  const given = (body as SyncErrorBody | undefined)?.message;
  const message = typeof given === 'string' ? given.slice(0, 200) : (text.slice(0, 200) || res.statusText);
  throw new CentralError(res.status, `central answered ${res.status}: ${message}`, body as SyncErrorBody | undefined, retry);
}

/** Headers of a request signed by the device (hello, the tail fetch). */
async function signedHeaders(device: Device, sign: Signer, method: string, pathAndQuery: string, body: string) {
  const signature = await sign(Buffer.from(requestSigningText(method, pathAndQuery, device.tenant, device.deviceId, body), 'utf8'));
  return { 'x-tenant': device.tenant, 'x-device': device.deviceId, 'x-signature': Buffer.from(signature).toString('base64') };
}

const base = (central: string) => central.replace(/\/+$/, '');

/** The box's calls to its central (README "Sync to the central node"). */
export const centralClient = {
  enrol: (central: string, req: EnrolRequest, options: ClientOptions): Promise<EnrolResponse> =>
    call(`${base(central)}${PATHS.enrol}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(req),
    }, options),

  async hello(device: Device, sign: Signer, req: HelloRequest, options: ClientOptions): Promise<HelloResponse> {
    const body = JSON.stringify(req);
    const headers = await signedHeaders(device, sign, 'POST', PATHS.hello, body);
    return call(`${base(device.central)}${PATHS.hello}`, {
      method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body,
    }, options);
  },

  postBatch: (device: Device, batch: Buffer, options: ClientOptions): Promise<BatchAck> =>
    call(`${base(device.central)}${PATHS.batches}`, {
      method: 'POST', headers: { 'content-type': BATCH_MEDIA_TYPE }, body: batch,
    }, options),

  async tail(device: Device, sign: Signer, after: number, limit: number, options: ClientOptions): Promise<TailResponse> {
    const path = `${PATHS.events}?after=${after}&limit=${limit}`;
    const headers = await signedHeaders(device, sign, 'GET', path, '');
    return call(`${base(device.central)}${path}`, { method: 'GET', headers }, options);
  },
};
