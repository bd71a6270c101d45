import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CheckpointerControl } from '../../db/checkpointer.js';
import { restartWal } from '../../db/checkpoint.js';
import type { Db } from '../../db/open.js';
import type { Logger } from '../../log.js';
import {
  CLOSE_REPLACED,
  encodeShip,
  NO_WAL,
  type Position,
  positionOf,
  SNAPSHOT_PAGES,
  type ToStandby,
} from './protocol.js';
import { openSnapshot } from './snapshot.js';
import { FRAME_HEADER_BYTES, type WalCursor } from './wal-format.js';
import { createWalPin } from './wal-pin.js';
import { createWalReader } from './wal-reader.js';

/** The stream to the standby as the replicator sees it (src/modules/standby/stream.ts on uWS). */
export interface StandbyLink {
  send(message: ToStandby | Buffer): void;
  /** Bytes queued for the standby and not yet taken by the network. */
  buffered(): number;
  close(code: number, reason: string): void;
}

export interface ReplicatorOptions {
  db: Db;
  dbFile: string;
  dataDir: string;
  log: Logger;
  /** The box's files the standby needs besides the database (the token key, the device identity). */
  carriedFiles: readonly string[];
  /** How long a confirmation waits for the standby before the primary goes on alone (docs: at most 1 s). */
  stallMs: number;
  /** A standby that went away is waited for (its frames kept in the WAL) until it is this far behind. */
  maxLagBytes: number;
  /** This box's term, sent with each PING (the standby refuses a primary of an older term). */
  term(): number;
  /** Told each time the primary goes on alone, or is joined again (its metrics and log). */
  onModeChange?(mode: ReplicationMode): void;
}

/** The standby hears from the primary at least this often: its silence is what a takeover waits for. */
const PING_MS = 500;

/**
 * `synchronous`: a standby holds everything confirmed, and every confirmation waits for it. `catchingUp`: a standby
 * is attached but behind (after a snapshot, or a stall); confirmations do not wait until it has caught up.
 * `snapshot`: one is being sent. `alone`: no standby attached.
 */
export type ReplicationMode = 'synchronous' | 'catchingUp' | 'snapshot' | 'alone';

export interface ReplicationStatus {
  mode: ReplicationMode;
  /** Bytes of WAL frames sent and not yet acknowledged, and the age of the oldest of them. */
  lagBytes: number;
  lagSeconds: number;
  /** Everything sent to the standby since start: frames, snapshots, files. */
  sentBytes: number;
  /** Confirmations that stopped waiting for the standby after the stall. */
  stalls: number;
  /** Answers given that the standby did not hold, since it was last in step (0 while synchronous). */
  aloneConfirmations: number;
}

/** How many pages a snapshot sends per binary frame, and how much may wait in the socket before it pauses. */
const SNAPSHOT_CHUNK_PAGES = 256;
const SNAPSHOT_BUFFERED_BYTES = 4 * 1024 * 1024;

/**
 * The primary's half of replication (docs/architecture.md "A standby box"): ships every committed transaction of
 * its WAL to the attached standby and holds each confirmation until the standby acknowledges it (at most
 * `stallMs`; then it goes on alone, and the standby catches up). The WAL keeps every frame the standby has not
 * acknowledged: a pin stops it restarting (src/modules/standby/wal-pin.ts), and it is restarted here, once
 * everything is acknowledged, when the checkpointer has copied it back whole (its `onCaughtUp`).
 */
export function createReplicator(o: ReplicatorOptions) {
  const walFile = `${o.dbFile}-wal`;
  const reader = createWalReader(walFile);
  const pin = createWalPin(o.dbFile);
  let checkpointer: CheckpointerControl | undefined;
  let link: StandbyLink | undefined;
  let mode: ReplicationMode = 'alone';
  /** Frames read and sent (or, with no standby, kept for one that comes back); undefined: a snapshot is needed. */
  let cursor: WalCursor | undefined;
  /** The snapshot was taken with no WAL at all: what comes next is the start of the WAL the next commit makes. */
  let fromStart = false;
  /** The standby's copy once it has applied everything sent: each SHIP names it as where it starts. */
  let shipped: Position = NO_WAL;
  /** Snapshots go one at a time (a standby that connects again while one is sent gets the next). */
  let snapshots: Promise<void> = Promise.resolve();
  let sentId = 0;
  let ackedId = 0;
  /** Each unacknowledged SHIP: its id, bytes, when it went. */
  const inFlight: { id: number; bytes: number; at: number }[] = [];
  const waiters: { id: number; done: (inStep: boolean) => void; at: number }[] = [];
  /** A restart this module made: any other means frames were lost to the standby. */
  let restarting = false;
  let sentBytes = 0;
  let stalls = 0;
  /** Answers given (commands, tokens, prints, events) that the standby did not hold, since it was last in step. */
  let aloneConfirmations = 0;
  const carried = new Map<string, number>();

  const setMode = (next: ReplicationMode): void => {
    if (next === mode) return;
    mode = next;
    o.onModeChange?.(next);
  };
  const releaseWaiters = (upTo: number): void => {
    while (waiters.length > 0 && waiters[0]!.id <= upTo) waiters.shift()!.done(true);
  };
  const goAlone = (): void => {
    for (const w of waiters.splice(0)) w.done(false);
  };

  /** Frames kept for a standby that is away, in bytes (0 when none is kept). */
  const keptBytes = (): number => {
    if (!cursor || !existsSync(walFile)) return 0;
    return Math.max(0, statSync(walFile).size - cursor.frames * (FRAME_HEADER_BYTES + cursor.header.pageSize));
  };

  /** Reads what was committed since the cursor, sends it, moves the pin. */
  function ship(): void {
    // With no standby attached nothing is read: the pin stays where it was, and the WAL keeps what it has not had.
    if (!link || mode === 'snapshot' || (!cursor && !fromStart)) return;
    const read = reader.read(fromStart ? undefined : cursor);
    if (read.restarted && !restarting) {
      // Never expected: the pin was held. The standby's copy can no longer follow: it gets a new snapshot.
      o.log.error('the WAL restarted past frames the standby had not received: it gets a new snapshot');
      cursor = undefined;
      pin.release();
      dropLink('the primary needs to send a new snapshot');
      return;
    }
    if (read.transactions.length === 0) {
      if (!fromStart) cursor = read.cursor ?? cursor;
      return;
    }
    fromStart = false;
    cursor = read.cursor!;
    pin.renew();
    const to = positionOf(cursor);
    const frame = encodeShip(++sentId, shipped, to, read.transactions);
    shipped = to;
    inFlight.push({ id: sentId, bytes: frame.length, at: performance.now() });
    sentBytes += frame.length;
    link.send(frame);
  }

  /** No standby attached any more: nothing waits for it. Returns the link it was. */
  function forgetLink(): StandbyLink | undefined {
    const old = link;
    link = undefined;
    inFlight.length = 0;
    setMode('alone');
    goAlone();
    return old;
  }

  /** Ends the stream at once (its close arrives later, and is then ignored). */
  function dropLink(reason: string): void {
    forgetLink()?.close(CLOSE_REPLACED, reason);
  }

  /** Sends the files the box's state needs besides the database, when they changed (or all, `force`). */
  function sendCarried(force: boolean): void {
    if (!link) return;
    for (const name of o.carriedFiles) {
      const file = join(o.dataDir, name);
      const mtime = existsSync(file) ? statSync(file).mtimeMs : -1;
      if (!force && carried.get(name) === mtime) continue;
      carried.set(name, mtime);
      const content = mtime < 0 ? null : readFileSync(file).toString('base64');
      sentBytes += content?.length ?? 0;
      link.send({ type: 'FILE', name, content });
    }
  }

  let lastPing = 0;
  const stallTimer = setInterval(() => {
    try {
      tick();
    } catch (err) {
      // A timer that threw would end the process: logged, and the next tick tries again.
      o.log.error({ err }, 'replication to the standby failed');
    }
  }, 100);
  stallTimer.unref();

  function tick(): void {
    const now = performance.now();
    if (link && mode !== 'snapshot' && now - lastPing >= PING_MS) {
      lastPing = now;
      link.send({ type: 'PING', term: o.term() });
    }
    if (mode === 'synchronous' && waiters.length > 0 && now - waiters[0]!.at >= o.stallMs) {
      stalls++;
      aloneConfirmations += waiters.length;
      o.log.warn(
        { waitedMs: Math.round(now - waiters[0]!.at) },
        'the standby did not acknowledge in time: going on alone until it catches up',
      );
      setMode('catchingUp');
      goAlone();
    }
    if (link) {
      // Writes that confirm nothing through the barrier (a stock document, a scheduled job) go out within 100 ms.
      ship();
      sendCarried(false);
    }
    // A standby away for so long that its frames would fill the disk: let the WAL restart; it gets a snapshot.
    if (!link && cursor && keptBytes() > o.maxLagBytes) {
      o.log.warn({ maxLagBytes: o.maxLagBytes }, 'the standby is too far behind: it will get a new snapshot');
      cursor = undefined;
      pin.release();
    }
  }

  function inStepIfCaughtUp(): void {
    if (link && mode === 'catchingUp' && ackedId >= 0 && ackedId >= sentId) {
      aloneConfirmations = 0;
      setMode('synchronous');
      o.log.info('the standby holds everything: confirmations wait for it again');
    }
  }

  async function sendSnapshot(to: StandbyLink): Promise<void> {
    if (link !== to) return;
    setMode('snapshot');
    const resume = (await checkpointer?.pause()) ?? (() => undefined);
    try {
      if (link !== to) return;
      // With no checkpoint copying frames into the database file, it and the WAL up to `at` are the database as of
      // `at`, and the pin keeps those frames from being overwritten (the snapshot checks each one it reads).
      const whole = reader.read(undefined);
      const at = whole.cursor;
      pin.renew();
      const last = whole.transactions.at(-1);
      const snap = openSnapshot(o.dbFile, walFile, at?.frames ? at : undefined, last?.dbPages);
      try {
        sendCarried(true);
        to.send({ type: 'SNAPSHOT', pageSize: snap.pageSize, pages: snap.pages });
        for (let chunk = snap.read(SNAPSHOT_CHUNK_PAGES); chunk.length > 0; chunk = snap.read(SNAPSHOT_CHUNK_PAGES)) {
          if (link !== to) return;
          to.send(Buffer.concat([Buffer.from([SNAPSHOT_PAGES]), chunk]));
          sentBytes += chunk.length + 1;
          while (to.buffered() > SNAPSHOT_BUFFERED_BYTES && link === to) await new Promise((r) => setTimeout(r, 5));
        }
      } finally {
        snap.close();
      }
      if (link !== to) return;
      cursor = at;
      fromStart = at === undefined;
      shipped = at ? positionOf(at) : NO_WAL;
      to.send({ type: 'SNAPSHOT_END', position: shipped });
      sentId = 0;
      ackedId = -1;
      setMode('catchingUp');
      ship();
    } finally {
      resume();
    }
  }

  return {
    /** The checkpointer, once it exists (made after the storage). */
    useCheckpointer(c: CheckpointerControl): void {
      checkpointer = c;
      c.keepWal(true);
    },
    /**
     * After the WAL's fsync: `done(true)` once the standby holds everything committed so far; `done(false)` at once
     * with no standby in step, or after `stallMs` (src/db/wal-sync.ts is wrapped with this by src/box/storage.ts).
     */
    barrier(done: (inStep: boolean) => void): void {
      if (mode !== 'synchronous') {
        ship();
        aloneConfirmations++;
        done(false);
        return;
      }
      ship();
      // ship() may have ended the stream (the WAL restarted under it): then this box is alone.
      if (mode !== 'synchronous') {
        aloneConfirmations++;
        done(false);
      } else if (ackedId >= sentId) done(true);
      else waiters.push({ id: sentId, done, at: performance.now() });
    },
    /**
     * Whether frames may be pushed without waiting (src/modules/events/publisher.ts): with a standby in step, only
     * once it holds everything committed so far, so that a frame pushed is never one a takeover would lose.
     */
    idle(): boolean {
      if (mode !== 'synchronous') return true;
      ship();
      return mode !== 'synchronous' || (waiters.length === 0 && ackedId >= sentId);
    },
    /** Where a standby that connects may resume from: the position the WAL still holds, or undefined. */
    canResume(p: Position | null): boolean {
      if (!p || !cursor || p.salt1 !== cursor.header.salt1 || p.salt2 !== cursor.header.salt2) return false;
      if (p.frames > cursor.frames) return false;
      // A transaction boundary of this WAL with the same running checksum: the standby's copy is this WAL's prefix.
      const at = reader.cursorAt(cursor.header, p.frames);
      return at !== undefined && at.cksum1 === p.cksum1 && at.cksum2 === p.cksum2;
    },
    /** A standby proved itself: the old one (if any) is replaced; it gets a snapshot or resumes. */
    attach(to: StandbyLink, resumeFrom: Position | null): void {
      link?.close(CLOSE_REPLACED, 'another stream of this standby replaced this one');
      link = to;
      inFlight.length = 0;
      if (resumeFrom && cursor) {
        // Resend from the standby's own position: the pages apply again in the same order (idempotent).
        cursor = { ...cursor, frames: resumeFrom.frames, cksum1: resumeFrom.cksum1, cksum2: resumeFrom.cksum2 };
        fromStart = false;
        shipped = resumeFrom;
        sentId = 0;
        ackedId = 0;
        sendCarried(true);
        setMode('catchingUp');
        ship();
        inStepIfCaughtUp();
        return;
      }
      snapshots = snapshots.then(() =>
        sendSnapshot(to).catch((err: unknown) => {
          o.log.error({ err }, 'sending the standby its snapshot failed');
          if (link === to) dropLink('the snapshot failed: connect again for another');
        }),
      );
    },
    acknowledged(from: StandbyLink, id: number): void {
      if (from !== link) return;
      if (id > sentId) return;
      ackedId = Math.max(ackedId, id);
      while (inFlight.length > 0 && inFlight[0]!.id <= ackedId) inFlight.shift();
      releaseWaiters(ackedId);
      if (mode === 'catchingUp' && ackedId >= sentId) {
        ship();
        inStepIfCaughtUp();
      }
    },
    detach(from: StandbyLink): void {
      if (from === link) forgetLink();
    },
    /**
     * The checkpointer copied the WAL back whole under a quiet moment: restart it here if the standby (attached or
     * away) holds every frame, so that the WAL does not only grow.
     */
    caughtUp(): void {
      ship();
      const keeping = cursor !== undefined && (link === undefined || ackedId < sentId || mode === 'snapshot');
      if (keeping) return;
      pin.release();
      restarting = true;
      try {
        restartWal(o.db);
        // The new generation's first frames (restartWal's own commit) go to the standby at once.
        ship();
      } finally {
        restarting = false;
        if (cursor) pin.renew();
      }
    },
    status(): ReplicationStatus {
      const oldest = inFlight[0];
      return {
        mode,
        lagBytes: inFlight.reduce((n, f) => n + f.bytes, 0),
        lagSeconds: oldest ? (performance.now() - oldest.at) / 1000 : 0,
        sentBytes,
        stalls,
        aloneConfirmations,
      };
    },
    close(): void {
      clearInterval(stallTimer);
      goAlone();
      link?.close(1001, 'the primary is stopping');
      link = undefined;
      pin.close();
      reader.close();
    },
  };
}
export type Replicator = ReturnType<typeof createReplicator>;
