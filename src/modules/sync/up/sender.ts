import type { Logger } from '../../../log.js';
import { isoOf } from '../../../shared/clock.js';
import { batchParts, MAX_BATCH_BYTES, MAX_BATCH_EVENTS, PROTOCOL, SCHEMA } from '../../../shared/sync-protocol.js';
import { type BatchAck, type BatchHeader, type Head, SYNC_CHECKS } from '../../../shared/sync-messages.js';
import { type StepContext, createCentralLoop } from '../central-loop.js';
import { CentralError, centralClient, type ClientOptions } from '../client.js';
import { type Device, loadDevice } from '../enrolment/device.js';
import { reconcile, type Reinstater, SyncStateError } from '../reconcile/reconcile.js';
import type { SendRow, SyncRepo } from '../repo.js';
import type { Signer } from '../enrolment/signer.js';
import type { UpdateReport } from '../../../shared/release-schemas.js';

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
  /**
   * A clock no one sets (performance.now by default): the heartbeat counts on it, and the wall clock's drift
   * from it shows a jump (docs/sync.md "Clocks").
   */
  monotonic?(): number;
  options: SenderOptions;
  signerFor(device: Device): Signer;
  reinstate: Reinstater;
  version: string;
  /** The program and its update state, carried by every hello (docs/operations.md "Updating boxes"). */
  updateReport?(): UpdateReport;
  /**
   * Resolves once an fsync begun after the call is done: the outbox rows just read may be a moment from the
   * disk (docs/architecture.md "Durability and speed"), and headquarters never gets an event a power cut could
   * take back. Absent: every commit is durable already.
   */
  synced?(): Promise<void>;
}

/**
 * The sender: one request in flight, off the request path. Reading a batch is one indexed SELECT; signing is
 * native (about 20 µs); the HTTP exchange is asynchronous; an acknowledgement is one small transaction. A sync
 * problem never blocks an order: commands only append to the outbox, and the sender's central loop retries
 * (docs/sync.md "Talking to the central") until the central takes the events.
 */
/**
 * The wall clock moved this much more or less than the monotonic one since the last hello: it was set (NTP after
 * a power cut, a dead RTC, a person), and the central's offset for this box is stale. A slewing NTP moves it by
 * half a millisecond a second at most.
 */
export const CLOCK_JUMP_MS = 1000;

export function createSender(deps: SenderDeps) {
  const { repo, log, options } = deps;
  const monotonic = deps.monotonic ?? (() => performance.now());
  let signer: Signer | undefined;
  /** The device `signer` signs for. */
  let signedAs: Device | undefined;
  let helloDone = false;
  /** When the last hello was answered, on both clocks. */
  let lastHello = { wallMs: 0, monoMs: 0 };
  /** Something a hello reports changed: one more hello, even if one is in flight now (it carries the old state). */
  let helloDue = false;
  let client: ClientOptions;
  /**
   * The next batch, read while the one before is in flight (one request in flight still: docs/sync.md "On the
   * box"). It is taken only when the acknowledgement moved the box to exactly where it was read from and nothing
   * moved the outbox meanwhile (`moves` counts the reconciliations that may renumber it, and the failures).
   */
  let ahead: { afterSeq: number; epoch: number; moves: number; batch: Promise<Batch> } | undefined;
  let moves = 0;

  /** A hello when due, then the next batch: at once again after a batch, else at the next heartbeat. */
  async function step(ctx: StepContext): Promise<number> {
    client = ctx.client;
    // Enrolled again (docs/sync.md "Enrolling again"): the new key signs, and a hello finds the new device's head.
    if (ctx.device.deviceId !== signedAs?.deviceId || ctx.device.keyId !== signedAs.keyId) {
      signer = deps.signerFor(ctx.device);
      signedAs = ctx.device;
      helloDone = false;
    }
    // A hello first, and again every heartbeat: the central sees the box alive, the box sees a restored central.
    // Again at once when the box's clock was set: the central moves the times of the events that follow by the
    // offset of the last hello (docs/sync.md "Clocks"), so that must be the clock they were written on.
    const sinceMs = monotonic() - lastHello.monoMs;
    const jumped = Math.abs(deps.now() - lastHello.wallMs - sinceMs) > CLOCK_JUMP_MS;
    if (!helloDone || helloDue || jumped || sinceMs >= options.heartbeatMs) await hello(ctx.device);
    const sent = await sendBatch(ctx.device);
    return sent ? 0 : options.heartbeatMs;
  }

  const loop = createCentralLoop({
    // A burst of appends travels together: a wake runs the step sync.flushDelayMs later.
    options: { ...options, wakeDelayMs: options.flushDelayMs },
    loadDevice: () => loadDevice(deps.dataDir),
    step,
    retryable: (err) => err instanceof SyncStateError,
    failed(err, delay) {
      const message = (err as Error).message;
      try {
        repo.setError(message, deps.now());
      } catch (dbErr) {
        // A full disk must not end the sender: the error is logged and retried with the rest.
        log.error({ err: dbErr }, 'recording a sync error failed');
      }
      log.warn(
        { err: message, status: (err as CentralError).status, retryInMs: delay },
        'sync to the central failed; retrying',
      );
      helloDone = false;
      moves++;
      ahead = undefined;
    },
  });

  async function hello(d: Device): Promise<void> {
    signer ??= deps.signerFor(d);
    helloDue = false;
    const answer = await centralClient.hello(
      d,
      signer,
      {
        protocol: PROTOCOL,
        schema: SCHEMA,
        boxTimeMs: deps.now(),
        pendingSeq: repo.last()?.seq ?? 0,
        // Headquarters sees how long the box's backlog has waited (docs/sync.md "The headquarters console").
        oldestPendingMs: repo.backlog(repo.state().ackedSeq).oldestMs,
        version: deps.version,
        ...(deps.updateReport ? { update: deps.updateReport() } : {}),
      },
      client,
    );
    if (!SYNC_CHECKS.hello.Check(answer)) {
      throw new CentralError(502, 'the central answered hello with an unexpected body');
    }
    if (!answer.protocols.includes(PROTOCOL)) {
      throw new CentralError(426, `the central speaks protocols ${answer.protocols.join(', ')}, this box ${PROTOCOL}`);
    }
    await findCentral(d, answer.head);
    repo.contact(deps.now());
    helloDone = true;
    lastHello = { wallMs: deps.now(), monoMs: monotonic() };
  }

  /** Moves to where the central is: resend after a restored central, skip what it has, restore a restored box. */
  async function findCentral(d: Device, head: Head): Promise<void> {
    moves++;
    ahead = undefined;
    await reconcile(
      {
        repo,
        log,
        now: deps.now,
        reinstate: deps.reinstate,
        device: d,
        fetchTail: (after, limit) => centralClient.tail(d, signer!, after, limit, client),
      },
      head,
    );
  }

  /** Sends the next batch; false when there is nothing to send. */
  async function sendBatch(d: Device): Promise<boolean> {
    const state = repo.state();
    const { rows, chunks } = await nextBatch(state.ackedSeq, state.epoch);
    if (rows.length === 0) return false;
    await deps.synced?.();
    const first = rows[0]!;
    const last = rows.at(-1)!;
    const header: BatchHeader = {
      protocol: PROTOCOL,
      schema: SCHEMA,
      tenant: d.tenant,
      deviceId: d.deviceId,
      keyId: d.keyId,
      epoch: state.epoch,
      firstSeq: first.seq,
      lastSeq: last.seq,
      prevHash: state.ackedHash,
      lastHash: last.chainHash,
      pendingSeq: repo.last()?.seq ?? last.seq,
      sentAt: isoOf(deps.now()),
    };
    const headerText = JSON.stringify(header);
    signer ??= deps.signerFor(d);
    const signature = await signer(Buffer.from(headerText, 'utf8'));
    let ack: BatchAck;
    try {
      const posted = centralClient.postBatch(d, batchParts(headerText, signature, chunks), client);
      // While the central works on this batch, the box reads the next one (the central's time was most of a
      // batch's, the box's reading the rest: docs/performance.md "Draining a busy day at 5,000 events/s").
      const batch = readBatch(last.seq);
      batch.catch(() => undefined); // a failed read is read again, by nextBatch
      ahead = { afterSeq: last.seq, epoch: state.epoch, moves, batch };
      ack = await posted;
    } catch (err) {
      // Not where the central is (a lost acknowledgement, a restored box or central): find it, then go on.
      if (err instanceof CentralError && err.status === 409 && SYNC_CHECKS.head.Check(err.body?.head)) {
        log.info(
          { head: err.body.head, firstSeq: first.seq, code: err.body.codes?.[0]?.code },
          'the central is elsewhere; finding it',
        );
        await findCentral(d, err.body.head);
        const moved = repo.state();
        // Sending the same batch again would get the same 409: back off instead of spinning.
        if (moved.ackedSeq === state.ackedSeq && moved.ackedHash === state.ackedHash) throw err;
        return true;
      }
      throw err;
    }
    if (
      !SYNC_CHECKS.ack.Check(ack) ||
      ack.ackedSeq !== last.seq ||
      ack.ackedHash !== last.chainHash ||
      ack.deadLetters.some((d) => d.seq < first.seq || d.seq > last.seq)
    ) {
      throw new CentralError(502, `the central's answer does not acknowledge the batch ${first.seq}..${last.seq}`);
    }
    repo.ack(ack.ackedSeq, ack.ackedHash, deps.now(), ack.deadLetters);
    if (ack.deadLetters.length > 0) {
      log.error(
        { count: ack.deadLetters.length, first: ack.deadLetters.slice(0, 10) },
        'the central set events aside as breaking its rules',
      );
    }
    return true;
  }

  /** The batch after `ackedSeq`: the one read ahead when it is still that one and not empty, else read now. */
  async function nextBatch(ackedSeq: number, epoch: number): Promise<Batch> {
    const read = ahead;
    ahead = undefined;
    if (read && read.afterSeq === ackedSeq && read.epoch === epoch && read.moves === moves) {
      const batch = await read.batch.catch(() => undefined);
      // Empty: rows written since it was read go now, not at the next heartbeat.
      if (batch && batch.rows.length > 0 && moves === read.moves) return batch;
    }
    return readBatch(ackedSeq);
  }

  /**
   * The rows of the next batch (at most MAX_BATCH_EVENTS and MAX_BATCH_BYTES of events, but always the first),
   * with their envelopes already encoded, a few dozen at a time with the event loop free in between: reading,
   * joining and encoding a whole batch (then 256 KiB) at once held it for milliseconds, enough to show in the order p99
   * while a backlog drains. The chunks go to the socket as they are (batchParts), never joined into one buffer.
   */
  async function readBatch(ackedSeq: number): Promise<Batch> {
    const rows: SendRow[] = [];
    const chunks: Buffer[] = [];
    let bytes = 0;
    for (let after = ackedSeq; ; ) {
      const chunk = repo.toSend(after, READ_CHUNK);
      const parts: Buffer[] = [];
      let taken = 0;
      for (const r of chunk) {
        bytes += r.envelope.length + 1;
        if ((rows.length > 0 && bytes > MAX_BATCH_BYTES) || rows.length === MAX_BATCH_EVENTS) break;
        if (taken++ > 0) parts.push(NEWLINE);
        parts.push(r.envelope);
        rows.push(r);
      }
      if (taken > 0) chunks.push(Buffer.concat(parts));
      if (taken < READ_CHUNK || chunk.length < READ_CHUNK) return { rows, chunks };
      after = chunk.at(-1)!.seq;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  return {
    run: loop.run,
    /** After a commit that wrote to the outbox: send within flushDelayMs (sooner if a send is due already). */
    wake: loop.wake,
    /** Something the hello reports changed (an update's state): say hello at the next step, soon. */
    helloSoon(): void {
      helloDue = true;
      loop.wake();
    },
    /** Ends the request in flight (the central's transaction either committed or not: the next start asks). */
    stop: loop.stop,
  };
}
export type Sender = ReturnType<typeof createSender>;

/** A batch's rows and their envelopes encoded, a few dozen a chunk (readBatch). */
interface Batch {
  rows: SendRow[];
  chunks: Buffer[];
}

const READ_CHUNK = 50;
const NEWLINE = Buffer.from('\n');
