import { randomUUID } from 'node:crypto';
import nacl from 'tweetnacl';
import {
  BATCH_MEDIA_TYPE,
  chainHash,
  encodeBatch,
  envelopeText,
  GENESIS_HASH,
  PATHS,
  PROTOCOL,
  SCHEMA,
  signDetached,
  signRequest,
} from '../../src/shared/sync-protocol.js';
import type { BatchHeader, EnvelopeKind, HelloRequest } from '../../src/shared/sync-messages.js';
import demo from '../../native-config/demo.json';
// Type only: the benchmarks bundle this file, and central.ts brings pg and vitest.
import type { TestCentral } from './central.js';

export interface SentEvent {
  seq: number;
  envelope: string;
  hash: string;
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/**
 * A simulated box: its own Ed25519 key (tweetnacl, as the box), an outbox of envelope texts chained with the
 * protocol file's hash, and batches signed and posted exactly as the protocol file frames them.
 */
export class SimDevice {
  readonly keys = nacl.sign.keyPair();
  deviceId = '';
  tenant = '';
  venue = '';
  keyId = '';
  epoch = 1;
  readonly events: SentEvent[] = [];
  /** The box's clock as it writes it into envelopes and headers (tests move it around). */
  get clockMs(): number {
    return this.clock.ms;
  }
  set clockMs(ms: number) {
    this.clock = { ms, setAt: Date.now() };
  }
  private clock = { ms: Date.now(), setAt: Date.now() };
  /**
   * The clock as it reads now, set and then running: what a hello measures and requests are stamped with, so a
   * simulation longer than the window stays within it (docs/sync.md "Signed requests").
   */
  private runningClockMs(): number {
    return this.clock.ms + (Date.now() - this.clock.setAt);
  }

  constructor(readonly baseUrl: string) {}

  get lastSeq(): number {
    return this.events.length;
  }

  async enrol(code: string, name = 'sim'): Promise<Answer> {
    const res = await this.request(
      'POST',
      PATHS.enrol,
      JSON.stringify({ code, publicKey: Buffer.from(this.keys.publicKey).toString('base64'), name }),
      {
        'content-type': 'application/json',
      },
    );
    if (res.status === 201)
      Object.assign(this, {
        deviceId: res.body.deviceId,
        tenant: res.body.tenant,
        venue: res.body.venue,
        keyId: res.body.keyId,
      });
    return res;
  }

  /** Appends an event to the outbox (seq = next) and returns it; `kind` may be anything for poison tests. */
  append(kind: string, aggregate: string, body: unknown, over: { tenant?: string; text?: string } = {}): SentEvent {
    const prev = this.events[this.events.length - 1]?.hash ?? GENESIS_HASH;
    const envelope =
      over.text ??
      envelopeText(
        {
          eventId: randomUUID(),
          tenant: over.tenant ?? this.tenant,
          aggregate,
          kind: kind as EnvelopeKind,
          boxTime: new Date(this.clockMs).toISOString(),
        },
        JSON.stringify(body),
      );
    const event = { seq: this.events.length + 1, envelope, hash: chainHash(prev, envelope) };
    this.events.push(event);
    return event;
  }

  /** An order.changed event: version `version` of order `orderId` (a new id when omitted). */
  order(
    orderId: string = randomUUID(),
    version = 1,
    status = 'NEW',
    created = new Date(this.clockMs).toISOString(),
    venue = this.venue,
  ): SentEvent {
    const order = {
      id: orderId,
      tenant: this.tenant,
      created,
      lastChanged: created,
      status,
      total: '10.00',
      buckets: [{ venue, lines: [] }],
    };
    return this.append('order.changed', orderId, {
      version,
      command: {
        correlationId: randomUUID(),
        kind: version === 1 ? 'new' : 'update',
        userId: randomUUID(),
        staff: false,
        confirmedAt: created,
      },
      order,
      detail: { contact: null, extra: null, rounds: 1, lineRounds: {} },
    });
  }

  stockDocument(
    warehouse: string,
    lines: [item: string, unit: string, deltaMicro: number][],
    id: string = randomUUID(),
  ): SentEvent {
    const document = {
      id,
      kind: 'PZ',
      warehouse,
      number: `PZ/${id.slice(0, 4)}`,
      created: new Date(this.clockMs).toISOString(),
      items: [],
    };
    return this.append('stock.document', id, {
      document,
      ledger: lines.map(([item, unit, d], i) => [warehouse, i + 1, item, unit, d]),
    });
  }

  /** The header of events from..to (1-based seqs of the outbox). */
  header(from: number, to: number, over: Partial<BatchHeader> = {}): BatchHeader {
    return {
      protocol: PROTOCOL,
      schema: SCHEMA,
      tenant: this.tenant,
      deviceId: this.deviceId,
      keyId: this.keyId,
      epoch: this.epoch,
      firstSeq: from,
      lastSeq: to,
      prevHash: this.events[from - 2]?.hash ?? GENESIS_HASH,
      lastHash: this.events[to - 1]!.hash,
      pendingSeq: this.lastSeq,
      sentAt: new Date(this.clockMs).toISOString(),
      ...over,
    };
  }

  /** The batch's bytes: header signed with `secretKey` (this device's unless given), events as stored. */
  batch(
    from: number,
    to: number,
    over: { header?: Partial<BatchHeader>; secretKey?: Uint8Array; envelopes?: string[] } = {},
  ): Buffer {
    const headerText = JSON.stringify(this.header(from, to, over.header));
    const signature = signDetached(Buffer.from(headerText, 'utf8'), over.secretKey ?? this.keys.secretKey);
    return encodeBatch(headerText, signature, over.envelopes ?? this.events.slice(from - 1, to).map((e) => e.envelope));
  }

  post(bytes: Buffer): Promise<Answer> {
    return this.request('POST', PATHS.batches, bytes, { 'content-type': BATCH_MEDIA_TYPE });
  }

  send(from: number, to: number): Promise<Answer> {
    return this.post(this.batch(from, to));
  }

  /** Sends everything from `from` in batches of `size`, honouring 429 Retry-After (scaled by `retryScale`). */
  async drain(from = 1, size = 100, retryScale = 1): Promise<Answer[]> {
    const answers: Answer[] = [];
    for (let seq = from; seq <= this.lastSeq; ) {
      const to = Math.min(this.lastSeq, seq + size - 1);
      const a = await this.send(seq, to);
      answers.push(a);
      if (a.status === 429) {
        await new Promise((r) => setTimeout(r, Number(a.headers.get('retry-after') ?? '1') * 1000 * retryScale));
        continue;
      }
      if (a.status === 409) {
        seq = a.body.expectedSeq;
        continue;
      }
      if (a.status !== 200) throw new Error(`batch ${seq}..${to}: ${a.status} ${JSON.stringify(a.body)}`);
      seq = to + 1;
    }
    return answers;
  }

  hello(over: Partial<HelloRequest> = {}): Promise<Answer> {
    const body = JSON.stringify({
      protocol: PROTOCOL,
      schema: SCHEMA,
      boxTimeMs: this.runningClockMs(),
      pendingSeq: this.lastSeq,
      version: 'sim',
      ...over,
    });
    return this.signed('POST', PATHS.hello, body).then(async (answer) => {
      // As the box: a hello refused as stale (its clock was set) goes again with the challenge signed in.
      const code = answer.status === 401 ? answer.body?.codes?.[0] : undefined;
      if (code?.code !== 'requestStale' || !code.args?.[0]) return answer;
      return this.signed('POST', PATHS.hello, body, code.args[0]);
    });
  }

  tail(after: number, limit?: number): Promise<Answer> {
    return this.signed('GET', `${PATHS.events}?after=${after}${limit ? `&limit=${limit}` : ''}`, '');
  }

  /** The catalogue's long poll (docs/sync.md "Down: the catalogue"), as the box asks it. */
  catalogue(after: number, waitS = 0, snapshot = false, release?: string): Promise<Answer> {
    const known = release === undefined ? '' : `&release=${encodeURIComponent(release)}`;
    return this.signed(
      'GET',
      `${PATHS.catalogue}?after=${after}&wait=${waitS}${snapshot ? '&snapshot=1' : ''}${known}`,
      '',
    );
  }

  /** A signed GET with more headers (a Range), its body as bytes: a release download as the box asks it. */
  async download(pathAndQuery: string, headers: Record<string, string> = {}): Promise<Answer & { bytes: Buffer }> {
    const res = await fetch(`${this.baseUrl}${pathAndQuery}`, {
      headers: { ...(await this.signedHeaders('GET', pathAndQuery, '')), ...headers },
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    let body: unknown = bytes;
    if (res.headers.get('content-type')?.startsWith('application/json')) body = JSON.parse(bytes.toString('utf8'));
    return { status: res.status, body, bytes, headers: res.headers };
  }

  /** The headers the device signs a request with, stamped with its clock (docs/sync.md "Signed requests"). */
  signedHeaders(method: string, pathAndQuery: string, body: string, challenge?: string) {
    const request = { method, pathAndQuery, tenant: this.tenant, deviceId: this.deviceId, body };
    return signRequest(request, (m) => signDetached(m, this.keys.secretKey), this.runningClockMs(), challenge);
  }

  private async signed(method: string, pathAndQuery: string, body: string, challenge?: string): Promise<Answer> {
    return this.request(method, pathAndQuery, method === 'GET' ? undefined : body, {
      'content-type': 'application/json',
      ...(await this.signedHeaders(method, pathAndQuery, body, challenge)),
    });
  }

  private async request(
    method: string,
    path: string,
    body: string | Buffer | undefined,
    headers: Record<string, string>,
  ): Promise<Answer> {
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }
}

/** A SimDevice enrolled at `central` with a fresh one-time code for `venue` (the demo's first venue by default). */
export async function enrolledDevice(central: TestCentral, venue = demo.tenants[0]!.venues[0]!.id): Promise<SimDevice> {
  const d = new SimDevice(central.url(''));
  const res = await d.enrol(await central.enrolCode(venue));
  if (res.status !== 201) throw new Error(`enrolment answered ${res.status}: ${JSON.stringify(res.body)}`);
  return d;
}
