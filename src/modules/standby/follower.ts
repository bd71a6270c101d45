import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { performance } from 'node:perf_hooks';
import { DB_FILE, PAGE_SIZE } from '../../db/open.js';
import { fsyncPath, writeFileDurably } from '../../shared/files.js';
import { pageSizeOf } from '../../db/page-size.js';
import type { Logger } from '../../log.js';
import { newNonce, prove, verifyProof } from './proof.js';
import {
  BOX_ID_HEADER,
  decodeShip,
  parseMessage,
  type Position,
  SHIP,
  SNAPSHOT_PAGES,
  STREAM_PATH,
  type ToPrimary,
  type ToStandby,
  samePosition,
  toStandbyCheck,
} from './protocol.js';
import { Position as PositionSchema } from './protocol.js';

const positionSchemaCheck = TypeCompiler.Compile(PositionSchema);
const positionCheck = (v: unknown): v is Position => positionSchemaCheck.Check(v);
import { createReplicaWal, type ReplicaWal } from './replica-wal.js';
import { keysOf, type StandbyState } from './state.js';

/**
 * A client may close a WebSocket only with 1000 or a code of 3000-4999 (the WHATWG WebSocket that Node's is): the
 * standby's own reasons for ending the stream.
 */
const CLOSE_PROTOCOL = 4400;
const CLOSE_STORE_FAILED = 4500;

/** Where the standby's copy stands in the primary's WAL: written after each durable append (docs: "A standby box"). */
export const POSITION_FILE = 'standby-position.json';

export interface FollowerOptions {
  dataDir: string;
  state: StandbyState;
  log: Logger;
  release: { version: string; schema: number };
  /** The standby checkpoints its WAL once idle this long with more than `idleCheckpointBytes` in it. */
  idleCheckpointMs?: number;
  idleCheckpointBytes?: number;
  /** ...and at once past this size. */
  maxWalBytes?: number;
  /** How long it waits before it connects again after the stream ended. */
  retryMs?: number;
  /** The only files of the data directory the primary may send (the token key, the device identity). */
  carriedFiles: readonly string[];
}

export interface FollowerStatus {
  state: 'connecting' | 'snapshot' | 'following' | 'refused';
  /** The primary's last word (a SHIP or a PING), in ms ago; null before the first. */
  primarySilentMs: number | null;
  position: Position | null;
  receivedBytes: number;
  /** Why the primary or this box refused the stream, when it did. */
  refusal: string | null;
  primary: { version: string; term: number } | null;
}

/**
 * The standby's half of replication (docs/architecture.md "A standby box"): a stream to the primary, a snapshot
 * when it has no copy the primary can resume, then every transaction appended durably to its own WAL before it
 * is acknowledged. Its database is therefore always the primary's as of a transaction the primary committed.
 */
export function createFollower(o: FollowerOptions) {
  const dbFile = join(o.dataDir, DB_FILE);
  const positionFile = join(o.dataDir, POSITION_FILE);
  const keys = keysOf(o.state);
  const peer = o.state.peer!;
  let replica: ReplicaWal | undefined;
  let socket: WebSocket | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let lastWord: number | undefined;
  let receivedBytes = 0;
  let status: FollowerStatus['state'] = 'connecting';
  let refusal: string | null = null;
  let primary: FollowerStatus['primary'] = null;
  let position: Position | null = readPosition(positionFile);
  // From now on the file may lag what is appended: marked not clean, on the disk, before the first append.
  if (position) writePosition(positionFile, position, { clean: false, durable: true });
  /** The append under way (src/modules/standby/replica-wal.ts appendAsync): nothing else touches the WAL meanwhile. */
  let appending: Promise<void> | undefined;
  let pageSize = (existsSync(dbFile) ? pageSizeOf(dbFile) : undefined) ?? PAGE_SIZE;

  function connect(): void {
    if (stopped) return;
    // The last stream's append finishes first: a snapshot on the new one replaces the WAL it writes.
    if (appending) {
      void appending.finally(connect);
      return;
    }
    status = status === 'refused' ? 'refused' : 'connecting';
    const url = `${peer.url.replace(/^http/, 'ws')}${STREAM_PATH}`;
    const ws = new WebSocket(url, { headers: { [BOX_ID_HEADER]: o.state.boxId } } as unknown as string[]);
    ws.binaryType = 'arraybuffer';
    socket = ws;
    const myNonce = newNonce();
    let welcomed = false;
    /** SHIPs received and not yet appended. */
    const waiting: NonNullable<ReturnType<typeof decodeShip>>[] = [];
    /** Where the copy will stand once everything received on this stream is appended: the next SHIP's `from`. */
    let received = position;
    let incoming: { fd: number; file: string; pages: number; got: number } | undefined;
    const send = (m: ToPrimary): void => ws.send(JSON.stringify(m));
    const refuse = (reason: 'release' | 'fenced' | 'badSignature', message: string): void => {
      status = 'refused';
      refusal = message;
      o.log.error({ reason }, message);
      send({ type: 'REFUSED', reason, message, term: o.state.term });
      ws.close(4403, reason);
    };
    ws.onmessage = (event: MessageEvent) => {
      try {
        receive(event);
      } catch (err) {
        // A full disk, an I/O error: nothing is acknowledged that is not durable; the stream starts again later.
        o.log.error({ err }, 'the standby could not store what the primary sent');
        ws.close(CLOSE_STORE_FAILED, 'the standby could not store the pages');
      }
    };
    function receive(event: MessageEvent): void {
      lastWord = performance.now();
      if (typeof event.data === 'string') {
        const m = parseMessage<ToStandby>(event.data, toStandbyCheck);
        if (!m) {
          ws.close(CLOSE_PROTOCOL, 'malformed message');
          return;
        }
        onControl(m);
        return;
      }
      const frame = Buffer.from(event.data as ArrayBuffer);
      receivedBytes += frame.length;
      if (!welcomed) {
        ws.close(CLOSE_PROTOCOL, 'pages before the primary proved itself');
        return;
      }
      if (frame[0] === SNAPSHOT_PAGES && incoming) {
        let at = 1;
        while (at < frame.length) at += writeSync(incoming.fd, frame, at, frame.length - at);
        incoming.got += (frame.length - 1) / pageSize;
        return;
      }
      if (frame[0] === SHIP) {
        const ship = decodeShip(frame, pageSize);
        if (!ship || incoming) {
          ws.close(CLOSE_PROTOCOL, 'malformed pages');
          return;
        }
        // Each SHIP starts where the last one (or the snapshot) left the copy: one that does not would leave a gap.
        if (!samePosition(ship.header.from, received)) {
          o.log.error({ from: ship.header.from, at: received }, 'the primary sent pages that do not follow this copy');
          ws.close(CLOSE_PROTOCOL, 'pages that do not follow the copy');
          return;
        }
        received = ship.header.position;
        waiting.push(ship);
        appending ??= appendWaiting().finally(() => {
          appending = undefined;
          scheduleCheckpoint();
        });
      }
    }
    /**
     * Group commit on the standby: the SHIPs that came while one append and its fsync ran go to the WAL together,
     * with one fsync, and the last of them is acknowledged (an ACK covers everything before it).
     */
    async function appendWaiting(): Promise<void> {
      try {
        while (waiting.length > 0 && socket === ws) {
          const batch = waiting.splice(0);
          replica ??= createReplicaWal(dbFile, pageSize);
          await replica.appendAsync(batch.flatMap((b) => b.transactions));
          const last = batch.at(-1)!.header;
          position = last.position;
          writePosition(positionFile, position);
          send({ type: 'ACK', id: last.id });
        }
      } catch (err) {
        o.log.error({ err }, 'the standby could not store what the primary sent');
        replica?.close();
        replica = undefined;
        // What reached the WAL is not known now: the next stream starts from a snapshot.
        position = null;
        ws.close(CLOSE_STORE_FAILED, 'the standby could not store the pages');
      } finally {
        waiting.length = 0;
      }
    }
    function onControl(m: ToStandby): void {
      switch (m.type) {
        case 'CHALLENGE': {
          primary = { version: m.version, term: m.term };
          if (m.boxId !== peer.boxId) {
            ws.close(4403, 'not the paired primary');
            return;
          }
          if (m.schema > o.release.schema) {
            refuse(
              'release',
              `the primary runs release ${m.version} (database schema ${m.schema}); this standby runs ${o.release.version} (schema ${o.release.schema}) and cannot take its database over: update the standby first`,
            );
            return;
          }
          if (m.term < o.state.term) {
            refuse(
              'fenced',
              `the primary is at term ${m.term}, this box has seen term ${o.state.term}: a newer primary exists`,
            );
            return;
          }
          send({
            type: 'AUTH',
            signature: prove('auth', m.nonce, o.state.boxId, keys.secretKey),
            nonce: myNonce,
            term: o.state.term,
            version: o.release.version,
            schema: o.release.schema,
            position: existsSync(dbFile) ? position : null,
          });
          return;
        }
        case 'WELCOME':
          if (!verifyProof('welcome', myNonce, peer.boxId, m.signature, peer.publicKey)) {
            refuse('badSignature', 'the primary did not prove it holds the paired key');
            return;
          }
          welcomed = true;
          refusal = null;
          status = m.mode === 'snapshot' ? 'snapshot' : 'following';
          o.log.info({ mode: m.mode, primary: peer.url }, 'following the primary');
          return;
        case 'SNAPSHOT': {
          if (!welcomed) {
            ws.close(CLOSE_PROTOCOL, 'snapshot before the primary proved itself');
            return;
          }
          pageSize = m.pageSize;
          replica?.close();
          replica = undefined;
          const file = `${dbFile}.incoming`;
          incoming = { fd: openSync(file, 'w', 0o600), file, pages: m.pages, got: 0 };
          status = 'snapshot';
          return;
        }
        case 'SNAPSHOT_END': {
          if (!incoming) {
            ws.close(CLOSE_PROTOCOL, 'snapshot end without a snapshot');
            return;
          }
          const inc = incoming;
          incoming = undefined;
          installSnapshot(inc, m.position);
          received = m.position;
          status = 'following';
          send({ type: 'ACK', id: 0 });
          return;
        }
        case 'FILE':
          if (!welcomed || !o.carriedFiles.includes(m.name)) return;
          writeCarried(o.dataDir, m.name, m.content);
          return;
        case 'PING':
          return;
        case 'REFUSED':
          status = 'refused';
          refusal = m.message;
          o.log.error({ reason: m.reason }, `the primary refused this standby: ${m.message}`);
          return;
        default:
          return;
      }
    }
    function installSnapshot(inc: NonNullable<typeof incoming>, at: Position): void {
      fsyncSync(inc.fd);
      closeSync(inc.fd);
      if (inc.got !== inc.pages) throw new Error(`snapshot has ${inc.got} pages, ${inc.pages} announced`);
      // The old copy's WAL must go before the new database comes: its frames would be replayed over it.
      rmSync(positionFile, { force: true });
      rmSync(`${dbFile}-wal`, { force: true });
      rmSync(`${dbFile}-shm`, { force: true });
      fsyncPath(o.dataDir, true);
      renameSync(inc.file, dbFile);
      fsyncPath(o.dataDir, true);
      position = at;
      writePosition(positionFile, at);
      o.log.info({ pages: inc.pages }, 'the snapshot of the primary is in place');
    }
    ws.onclose = (event: CloseEvent) => {
      if (socket === ws) socket = undefined;
      if (incoming) {
        try {
          closeSync(incoming.fd);
        } catch {
          // closed already
        }
        rmSync(incoming.file, { force: true });
        incoming = undefined;
      }
      if (status !== 'refused') status = 'connecting';
      if (!stopped) {
        o.log.warn({ code: event.code, reason: event.reason }, 'the stream to the primary ended; connecting again');
        retry = setTimeout(connect, o.retryMs ?? 500);
      }
    };
    ws.onerror = () => undefined;
  }

  function scheduleCheckpoint(): void {
    if (!replica || appending) return;
    if (replica.walBytes() > (o.maxWalBytes ?? 256 * 1024 * 1024)) {
      replica.checkpoint();
      return;
    }
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      if (replica && !appending && replica.walBytes() > (o.idleCheckpointBytes ?? 4 * 1024 * 1024))
        replica.checkpoint();
    }, o.idleCheckpointMs ?? 1000);
  }

  return {
    start(): void {
      connect();
    },
    status(): FollowerStatus {
      return {
        state: status,
        primarySilentMs: lastWord === undefined ? null : Math.round(performance.now() - lastWord),
        position,
        receivedBytes,
        refusal,
        primary,
      };
    },
    /** Stops following and leaves a database SQLite opens as the primary's last transaction received. */
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(retry);
      clearTimeout(idleTimer);
      const ws = socket;
      if (ws && ws.readyState !== WebSocket.CLOSED) {
        const closed = new Promise<void>((r) => ws.addEventListener('close', () => r()));
        ws.close(1000, 'the standby is stopping');
        await Promise.race([closed, new Promise((r) => setTimeout(r, 1000))]);
      }
      // What was received is stored before the copy is handed over (a takeover opens it at once).
      await appending?.catch(() => undefined);
      // A clean stop: the WAL copied back into the database, and the position saved as one to resume from.
      try {
        replica?.checkpoint();
        if (position) writePosition(positionFile, position, { clean: true, durable: true });
      } catch (err) {
        o.log.warn({ err }, 'the standby could not stop cleanly: it will get a new snapshot');
      }
      replica?.close();
      replica = undefined;
    },
  };
}
export type Follower = ReturnType<typeof createFollower>;

/**
 * The position file: where the copy stands, and whether the follower stopped cleanly there. Written without an
 * fsync at each acknowledgement, so after a crash or a power cut it may lag the WAL the follower appended: sent
 * again from there, the pages would briefly mix versions. So a position counts only after a clean stop (the WAL
 * copied back into the database, the file synced with `clean`); after anything else the standby gets a snapshot.
 */
interface PositionFile {
  position: Position;
  clean: boolean;
}

function readPosition(file: string): Position | null {
  try {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as PositionFile;
    return stored.clean === true && positionCheck(stored.position) ? stored.position : null;
  } catch {
    return null;
  }
}

/** At each acknowledgement not durable, nor clean; at the follower's start and clean stop, durable. */
function writePosition(file: string, position: Position, how = { clean: false, durable: false }): void {
  const text = JSON.stringify({ position, clean: how.clean } satisfies PositionFile);
  if (how.durable) {
    writeFileDurably(file, text, 0o644);
    return;
  }
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

function writeCarried(dataDir: string, name: string, content: string | null): void {
  const file = join(dataDir, name);
  if (content === null) {
    rmSync(file, { force: true });
    return;
  }
  writeFileDurably(file, Buffer.from(content, 'base64'), 0o600);
}
