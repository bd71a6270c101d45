import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import type { Logger } from '../../log.js';
import { newNonce, prove, verifyProof } from './proof.js';
import {
  BOX_ID_HEADER,
  CLOSE_REFUSED,
  CLOSE_REPLACED,
  parseMessage,
  type Position,
  STREAM_PATH,
  type ToPrimary,
  type ToStandby,
  toPrimaryCheck,
} from './protocol.js';
import type { StandbyLink } from './primary.js';
import { keysOf, type StandbyState } from './state.js';

/** What the stream needs of the primary's side (src/modules/standby/pair.ts). */
export interface StreamDeps {
  log: Logger;
  state(): StandbyState;
  release: { version: string; schema: number };
  /** Whether replication can resume a standby from this position (its WAL still holds what follows). */
  canResume(position: Position | null): boolean;
  /** A standby proved itself: hand the link to replication, resuming from `position` (null: a snapshot). */
  attach(link: StandbyLink, position: Position | null): void;
  acknowledged(link: StandbyLink, id: number): void;
  detach(link: StandbyLink): void;
  /** The standby said this primary is fenced (a higher term exists): it stops confirming. */
  fenced(term: number, message: string): void;
}

interface StreamData {
  boxId: string;
  nonce: string;
  proved: boolean;
  link?: StandbyLink;
  ws?: WebSocket<StreamData>;
  closed: boolean;
  authTimer?: NodeJS.Timeout;
}

/** How long a stream may take to prove itself. */
const AUTH_MS = 5000;

/**
 * The primary's end of the stream (docs/architecture.md "A standby box"). Only the paired standby gets past the
 * upgrade (its box id in `x-box-id`), and nothing but its AUTH is read until it has signed the challenge.
 */
export function mountStandbyStream(app: TemplatedApp, deps: StreamDeps): void {
  const { log } = deps;
  app.ws<StreamData>(STREAM_PATH, {
    // An ACK or an AUTH is small; a standby has nothing larger to say.
    maxPayloadLength: 4096,
    idleTimeout: 16,
    sendPingsAutomatically: true,
    // A snapshot chunk or a large SHIP waits in the socket while the standby reads; past this the stream closes
    // (never a frame dropped: the standby's copy would go on without it).
    maxBackpressure: 64 * 1024 * 1024,
    closeOnBackpressureLimit: 1,
    upgrade(res, req, context) {
      const boxId = req.getHeader(BOX_ID_HEADER);
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const peer = deps.state().peer;
      if (deps.state().role !== 'primary' || !peer || peer.boxId !== boxId) {
        res.writeStatus('403 Forbidden');
        res.writeHeader('content-type', 'application/json; charset=utf-8');
        res.end(
          JSON.stringify({
            message: 'this box has no standby of that id',
            codes: [{ code: 'forbidden', message: 'this box has no standby of that id', args: [] }],
          }),
        );
        return;
      }
      res.upgrade<StreamData>(
        { boxId, nonce: newNonce(), proved: false, closed: false },
        key,
        protocol,
        extensions,
        context,
      );
    },
    open(ws) {
      const data = ws.getUserData();
      data.ws = ws;
      // Only the paired standby passes the upgrade, but its id is no secret: a stream that has not proved itself
      // within AUTH_MS is closed, so strangers cannot hold streams open.
      data.authTimer = setTimeout(() => {
        if (!data.proved && !data.closed) ws.end(CLOSE_REFUSED, 'no AUTH');
      }, AUTH_MS);
      const s = deps.state();
      send(ws, {
        type: 'CHALLENGE',
        nonce: data.nonce,
        boxId: s.boxId,
        term: s.term,
        version: deps.release.version,
        schema: deps.release.schema,
      });
    },
    message(ws, message, isBinary) {
      try {
        onMessage(ws, message, isBinary);
      } catch (err) {
        // Nothing may throw into uWS (it would end the process): the stream ends, the standby connects again.
        log.error({ err }, 'the standby stream failed');
        ws.end(1011, 'internal error');
      }
    },
    close(ws) {
      const data = ws.getUserData();
      data.closed = true;
      clearTimeout(data.authTimer);
      if (data.link) {
        deps.detach(data.link);
        log.warn({ standby: data.boxId }, 'the standby is gone');
      }
    },
  });

  function onMessage(ws: WebSocket<StreamData>, message: ArrayBuffer, isBinary: boolean): void {
    const data = ws.getUserData();
    if (isBinary) {
      ws.end(1008, 'the standby sends text only');
      return;
    }
    const m = parseMessage<ToPrimary>(Buffer.from(message).toString('utf8'), toPrimaryCheck);
    if (!m) {
      ws.end(1008, 'malformed message');
      return;
    }
    if (!data.proved) {
      if (m.type !== 'AUTH') {
        ws.end(1008, 'AUTH first');
        return;
      }
      const s = deps.state();
      if (!s.peer || !verifyProof('auth', data.nonce, data.boxId, m.signature, s.peer.publicKey)) {
        send(ws, {
          type: 'REFUSED',
          reason: 'badSignature',
          message: 'the standby did not prove its key',
          term: s.term,
        });
        ws.end(CLOSE_REFUSED, 'badSignature');
        return;
      }
      if (m.term > s.term) {
        deps.fenced(m.term, `the standby has seen term ${m.term}, this primary is at ${s.term}`);
        send(ws, { type: 'REFUSED', reason: 'fenced', message: 'a newer primary exists', term: s.term });
        ws.end(CLOSE_REFUSED, 'fenced');
        return;
      }
      if (m.schema < deps.release.schema) {
        const message = `the standby runs release ${m.version} (database schema ${m.schema}), this primary ${deps.release.version} (schema ${deps.release.schema}): update the standby to this release`;
        log.error({ standby: data.boxId }, message);
        send(ws, { type: 'REFUSED', reason: 'release', message, term: s.term });
        ws.end(CLOSE_REFUSED, 'release');
        return;
      }
      data.proved = true;
      const link: StandbyLink = {
        send: (msg) => {
          if (data.closed) return;
          // 2: dropped (uWS's backpressure limit). A SHIP lost would leave a gap in the standby's copy: end.
          const sent = Buffer.isBuffer(msg) ? ws.send(msg, true) : ws.send(JSON.stringify(msg), false);
          if (sent === 2) ws.end(CLOSE_REPLACED, 'the standby fell too far behind');
        },
        buffered: () => (data.closed ? 0 : ws.getBufferedAmount()),
        close: (code, reason) => {
          if (!data.closed) ws.end(code, reason);
        },
      };
      data.link = link;
      const resume = deps.canResume(m.position);
      log.info({ standby: data.boxId, version: m.version, resume }, 'the standby is connected');
      // WELCOME goes before anything attach sends: the snapshot, or the first SHIP after the standby's position.
      send(ws, {
        type: 'WELCOME',
        signature: prove('welcome', m.nonce, s.boxId, keysOf(s).secretKey),
        mode: resume ? 'resume' : 'snapshot',
      });
      deps.attach(link, resume ? m.position : null);
      return;
    }
    if (m.type === 'ACK' && data.link) deps.acknowledged(data.link, m.id);
    if (m.type === 'REFUSED' && m.reason === 'fenced') deps.fenced(m.term, m.message);
  }
}

function send(ws: WebSocket<StreamData>, m: ToStandby): void {
  if (!ws.getUserData().closed) ws.send(JSON.stringify(m), false);
}
