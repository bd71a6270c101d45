import type { Logger } from '../../log.js';
import { isoOf } from '../../shared/clock.js';
import { batchParts, MAX_BATCH_BYTES, MAX_BATCH_EVENTS, PROTOCOL, SCHEMA } from '../../shared/sync-protocol.js';
import { type BatchAck, type BatchHeader, type Head, SYNC_CHECKS } from '../../shared/sync-messages.js';
import { CentralError, centralClient, type ClientOptions } from './client.js';
import { type Device, loadDevice } from './device.js';
import { reconcile, type RestoreApplier } from './restore.js';
import type { OutboxRow, SyncRepo } from './repo.js';
import type { Signer } from './signer.js';

export interface SenderOptions {
  /** Wait this long after a commit before sending, so a burst of commands travels in one batch. */
  flushDelayMs: number;
  retryMinMs: number;
  retryMaxMs: number;
  /** An idle box says hello this often (the central sees it alive; a restored central is noticed). */
  heartbeatMs: number;
  requestTimeoutMs: number;
  /** How often a box that is not enrolled looks for its device file (written by `sync enrol`). */
  enrolPollMs: number;
}

export interface SenderDeps {
  repo: SyncRepo;
  dataDir: string;
  log: Logger;
  now(): number;
  options: SenderOptions;
  signerFor(device: Device): Signer;
  restore: RestoreApplier;
  version: string;
  /**
   * Resolves once an fsync begun after the call is done: the outbox rows just read may be a moment from the
   * disk (docs/operations.md "Durability and speed"), and headquarters never gets an event a power cut could
   * take back. Absent: every commit is durable already.
   */
  synced?(): Promise<void>;
}

/**
 * The sender: one request in flight, off the request path. Reading a batch is one indexed SELECT; signing is
 * native (about 20 µs); the HTTP exchange is asynchronous; an acknowledgement is one small transaction. A sync
 * problem never blocks an order: commands only append to the outbox, and the sender retries with capped,
 * fully jittered backoff (or the central's Retry-After) until the central takes the events.
 */
export function createSender(deps: SenderDeps) {
  const { repo, log, options } = deps;
  let device: Device | undefined;
  let signer: Signer | undefined;
  let helloDone = false;
  let lastHelloMs = 0;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  let dueAt = Number.POSITIVE_INFINITY;
  let running: Promise<void> | undefined;
  /** A change committed while a cycle ran: that cycle may have read the outbox before it. */
  let wokenWhileRunning = false;
  /** Until when a failure's backoff holds: a new change does not cut it short (the retry takes it along). */
  let backoffUntil = 0;
  let stopped = false;
  const abort = new AbortController();
  const client: ClientOptions = { requestTimeoutMs: options.requestTimeoutMs, signal: abort.signal };

  /** Runs the loop in `ms` unless it is due sooner already. */
  function schedule(ms: number): void {
    if (stopped) return;
    const at = deps.now() + ms;
    if (at >= dueAt && timer) return;
    clearTimeout(timer);
    dueAt = at;
    timer = setTimeout(() => {
      timer = undefined;
      dueAt = Number.POSITIVE_INFINITY;
      wokenWhileRunning = false;
      running = cycle().finally(() => {
        running = undefined;
        if (wokenWhileRunning && deps.now() >= backoffUntil) schedule(options.flushDelayMs);
      });
    }, ms);
  }

  async function cycle(): Promise<void> {
    try {
      device ??= loadDevice(deps.dataDir);
      if (!device) return schedule(options.enrolPollMs);
      // A hello first, and again every heartbeat: the central sees the box alive, the box sees a restored central.
      if (!helloDone || deps.now() - lastHelloMs >= options.heartbeatMs) await hello(device);
      const sent = await sendBatch(device);
      attempt = 0;
      backoffUntil = 0;
      schedule(sent ? 0 : options.heartbeatMs);
    } catch (err) {
      if (stopped) return;
      attempt++;
      const delay = retryDelay(err);
      const message = (err as Error).message;
      try {
        repo.setError(message, deps.now());
      } catch (dbErr) {
        // A full disk must not end the process from a timer: the error is logged and retried with the rest.
        log.error({ err: dbErr }, 'recording a sync error failed');
      }
      log.warn({ err: message, status: (err as CentralError).status, retryInMs: delay }, 'sync to the central failed; retrying');
      helloDone = false;
      backoffUntil = deps.now() + delay;
      schedule(delay);
    }
  }

  function retryDelay(err: unknown): number {
    if (err instanceof CentralError && err.retryAfterS !== undefined && (err.status === 429 || err.status === 503)) {
      return Math.min(options.retryMaxMs, Math.max(options.retryMinMs, err.retryAfterS * 1000));
    }
    // A refused device or an unknown protocol will not mend by itself soon: wait the longest.
    if (err instanceof CentralError && [401, 403, 426].includes(err.status)) return options.retryMaxMs;
    // Full jitter (uniform between 0 and the capped exponential step) keeps a hundred boxes from retrying together.
    const cap = Math.min(options.retryMaxMs, options.retryMinMs * 2 ** Math.min(attempt, 30));
    return Math.max(options.retryMinMs / 4, Math.random() * cap);
  }

  async function hello(d: Device): Promise<void> {
    signer ??= deps.signerFor(d);
    const answer = await centralClient.hello(d, signer, {
      protocol: PROTOCOL, schema: SCHEMA, boxTimeMs: deps.now(), pendingSeq: repo.last()?.seq ?? 0, version: deps.version,
    }, client);
    if (!SYNC_CHECKS.hello.Check(answer)) {
      throw new CentralError(502, 'the central answered hello with an unexpected body');
    }
    if (!answer.protocols.includes(PROTOCOL)) {
      throw new CentralError(426, `the central speaks protocols ${answer.protocols.join(', ')}, this box ${PROTOCOL}`);
    }
    await findCentral(d, answer.head);
    repo.contact(deps.now());
    helloDone = true;
    lastHelloMs = deps.now();
  }

  /** Moves to where the central is: resend after a restored central, skip what it has, restore a restored box. */
  async function findCentral(d: Device, head: Head): Promise<void> {
    await reconcile({
      repo, log, now: deps.now, restore: deps.restore, device: d,
      fetchTail: (after, limit) => centralClient.tail(d, signer!, after, limit, client),
    }, head);
  }

  /** Sends the next batch; false when there is nothing to send. */
  async function sendBatch(d: Device): Promise<boolean> {
    const state = repo.state();
    const { rows, chunks } = await readBatch(state.ackedSeq);
    if (rows.length === 0) return false;
    await deps.synced?.();
    const first = rows[0]!;
    const last = rows.at(-1)!;
    const header: BatchHeader = {
      protocol: PROTOCOL, schema: SCHEMA, tenant: d.tenant, deviceId: d.deviceId, keyId: d.keyId, epoch: state.epoch,
      firstSeq: first.seq, lastSeq: last.seq, prevHash: state.ackedHash, lastHash: last.chainHash,
      pendingSeq: repo.last()?.seq ?? last.seq, sentAt: isoOf(deps.now()),
    };
    const headerText = JSON.stringify(header);
    signer ??= deps.signerFor(d);
    const signature = await signer(Buffer.from(headerText, 'utf8'));
    let ack: BatchAck;
    try {
      ack = await centralClient.postBatch(d, batchParts(headerText, signature, chunks), client);
    } catch (err) {
      // Not where the central is (a lost acknowledgement, a restored box or central): find it, then go on.
      if (err instanceof CentralError && err.status === 409 && SYNC_CHECKS.head.Check(err.body?.head)) {
        log.info({ head: err.body.head, firstSeq: first.seq, code: err.body.codes?.[0]?.code }, 'the central is elsewhere; finding it');
        await findCentral(d, err.body.head);
        const moved = repo.state();
        // Sending the same batch again would get the same 409: back off instead of spinning.
        if (moved.ackedSeq === state.ackedSeq && moved.ackedHash === state.ackedHash) throw err;
        return true;
      }
      throw err;
    }
    if (!SYNC_CHECKS.ack.Check(ack) || ack.ackedSeq !== last.seq || ack.ackedHash !== last.chainHash
      || ack.deadLetters.some((d) => d.seq < first.seq || d.seq > last.seq)) {
      throw new CentralError(502, `the central's answer does not acknowledge the batch ${first.seq}..${last.seq}`);
    }
    repo.ack(ack.ackedSeq, ack.ackedHash, deps.now(), ack.deadLetters);
    if (ack.deadLetters.length > 0) {
      log.error({ count: ack.deadLetters.length, first: ack.deadLetters.slice(0, 10) }, 'the central set events aside as breaking its rules');
    }
    return true;
  }

  /**
   * The rows of the next batch (at most MAX_BATCH_EVENTS and MAX_BATCH_BYTES of events, but always the first),
   * with their envelopes already encoded, a few dozen at a time with the event loop free in between: reading,
   * joining and encoding a whole 256 KiB batch at once held it for milliseconds, enough to show in the order p99
   * while a backlog drains. The chunks go to the socket as they are (batchParts), never joined into one buffer.
   */
  async function readBatch(ackedSeq: number): Promise<{ rows: OutboxRow[]; chunks: Buffer[] }> {
    const rows: OutboxRow[] = [];
    const chunks: Buffer[] = [];
    let bytes = 0;
    for (let after = ackedSeq; ;) {
      const chunk = repo.after(after, READ_CHUNK);
      let taken = 0;
      for (const r of chunk) {
        bytes += Buffer.byteLength(r.envelope) + 1;
        if ((rows.length > 0 && bytes > MAX_BATCH_BYTES) || rows.length === MAX_BATCH_EVENTS) break;
        rows.push(r);
        taken++;
      }
      if (taken > 0) chunks.push(Buffer.from(chunk.slice(0, taken).map((r) => r.envelope).join('\n'), 'utf8'));
      if (taken < READ_CHUNK || chunk.length < READ_CHUNK) return { rows, chunks };
      after = chunk.at(-1)!.seq;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  return {
    /** After a commit that wrote to the outbox: send within flushDelayMs (sooner if a send is due already). */
    wake(): void {
      if (running) wokenWhileRunning = true;
      else if (deps.now() >= backoffUntil) schedule(options.flushDelayMs);
    },
    start(): void {
      schedule(0);
    },
    /** Ends the request in flight (the central's transaction either committed or not: the next start asks). */
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      abort.abort();
      await running?.catch(() => undefined);
    },
  };
}
export type Sender = ReturnType<typeof createSender>;

const READ_CHUNK = 50;
