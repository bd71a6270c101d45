import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import { deriveClientAddress, type ForwardedHeader } from '../http/client-address.js';
import { copyRequest } from '../http/mount.js';
import { statusLine } from '../http/status-text.js';
import type { HttpRequest, Principal } from '../http/types.js';
import type { Logger } from '../log.js';
import type { AddressList } from '../shared/addresses.js';
import { isoOf } from '../shared/clock.js';
import { AppError, errorBody, invalidField } from '../shared/errors.js';
import { type EventStore, type OutgoingFrame, venueStream } from '../modules/events/event-store.js';
import {
  CLOSE_INTERNAL,
  CLOSE_MESSAGE_SENT,
  CLOSE_REPLAY_TOO_LARGE,
  CLOSE_TOKEN_EXPIRED,
  CLOSE_TOO_SLOW,
  helloFrame,
  REPLAY_TOO_LARGE_REASON,
  TOKEN_EXPIRED_REASON,
  TOO_SLOW_REASON,
} from '../shared/socket-protocol.js';
import { wireFrame } from './frame-size.js';
import { type AckWindow, countPong, countSent, newAckWindow, pingPayload } from './ack-window.js';
import { createHeldFrames } from './held-frames.js';
import { DROPPED, pumpReplay, type ReplayState } from './replay.js';
import { createSendBudget } from './send-budget.js';
import { createSocketCounts } from './socket-counts.js';

interface SocketData extends ReplayState {
  principal: Principal;
  /** The client's address (behind a trusted proxy, the one it forwarded for), for the logs. */
  address: string;
  since: number | undefined;
  /** The stream this socket reads: the user's own, or a venue's (`?venue=V`, staff). */
  stream: string;
  venue: string | undefined;
  key: string;
  /** The per-user and per-token counters this socket takes a place in. */
  countKeys: readonly string[];
  /** Bytes in this socket's send buffer when last looked at (send, drain): its share of the budget. */
  buffered: number;
  /** What the client has read of what was sent, by its pongs. */
  ack: AckWindow;
  ws?: WebSocket<SocketData>;
  closed: boolean;
  expiryTimer?: NodeJS.Timeout;
}

/** The `sockets` section of the config (native-config/venue-box.jsonc). */
export interface SocketLimits {
  maxBufferedBytes: number;
  maxBackpressureBytes: number;
  maxUnacknowledgedBytes: number;
  maxReplayBytes: number;
  maxFrameBytes: number;
  maxPerUser: number;
  maxPerToken: number;
  /** uWS pings a quiet socket after half this and drops it when nothing (no pong) came back within it. */
  idleTimeoutSeconds: number;
}

export interface HubDeps {
  log: Logger;
  events: EventStore;
  sockets: SocketLimits;
  /** Verifies the credentials of an upgrade request (header, `ticket` or `access_token`); throws a 401 AppError. */
  authenticateSocket(req: HttpRequest): Principal;
  /** As the HTTP routes' (src/http/mount.ts): whose forwarding header names the client, and which header. */
  trustedProxies?: AddressList;
  forwardedHeader?: ForwardedHeader;
  /** Allows a principal to watch every order of a venue (`?venue=V`); throws a 403 or 404 AppError. */
  authorizeVenue(principal: Principal, venueId: string): void;
  /**
   * Why the socket's token was revoked since it opened (its 4001 close reason), undefined while it stands: asked
   * before every push, so it must answer from memory (src/modules/auth/revocations.ts).
   */
  revokedReason(principal: Principal): string | undefined;
}

/** A revoked access token (src/modules/auth/repo.ts `Revocation`), and the reason its sockets are closed with. */
export interface RevokedToken {
  tenantId: string;
  jti: string;
  reason: string;
}

/** How long uWS keeps a socket closed with end() that cannot take its close frame: idleTimeout 120 -> 16 s. */
const CLOSING_HOLD_MS = 17_000;
const streamKey = (tenantId: string, stream: string): string => `${tenantId}:${stream}`;

/**
 * The live socket: sockets per stream (a user's, or a venue's for staff), HELLO, replay after `?since=N`,
 * pushes, and close at token expiry. Memory is bounded: every socket's send buffer, all of them together,
 * a replay, a frame and the sockets per user and per token (docs/api.md "The socket").
 */
export function createHub(app: TemplatedApp, path: string, deps: HubDeps) {
  const { log, events, sockets: limits } = deps;
  const sockets = new Map<string, Set<WebSocket<SocketData>>>();
  const budget = createSendBudget<SocketData>(limits.maxBufferedBytes, limits.maxBackpressureBytes);
  const counts = createSocketCounts(limits);
  const notDurable = createHeldFrames();
  // A frame never fills a socket's whole allowance by itself, so a reader that is keeping up is never closed
  // for one big frame.
  const maxFrameBytes = Math.min(limits.maxFrameBytes, limits.maxBackpressureBytes);
  // What a reader has not acknowledged yet (src/ws/ack-window.ts); a replay waits for the pong each ping asks for.
  const ackLimits = { maxBytes: limits.maxUnacknowledgedBytes, pingEveryBytes: limits.maxUnacknowledgedBytes / 4 };

  // A socket closed with a close frame keeps its send buffer until the client reads it or uWS gives up on it
  // (for idleTimeout 120, 16 s later). Under a flood of slow sockets those buffers add up (1000 frozen sockets
  // peaked ~220 MB higher without this), so they have a budget of their own, as large as the live one; past it
  // a slow socket is dropped
  // without a close frame (the client sees 1006), which frees its buffer at once. It loses nothing either way.
  let closingBytes = 0;
  const closeTooSlow = (data: SocketData, why: string): void => {
    if (data.closed) return;
    const held = data.buffered;
    const graceful = closingBytes + held <= limits.maxBufferedBytes;
    const unacknowledged = data.ack.sent - data.ack.acked;
    log.info(
      {
        userId: data.principal.userId,
        address: data.address,
        stream: data.stream,
        buffered: held,
        unacknowledged,
        why,
        graceful,
      },
      'socket too slow: closed',
    );
    if (!graceful) {
      data.ws!.close();
      return;
    }
    closingBytes += held;
    setTimeout(() => {
      closingBytes -= held;
    }, CLOSING_HOLD_MS).unref();
    data.ws!.end(CLOSE_TOO_SLOW, TOO_SLOW_REASON);
  };
  /** Records a socket's buffer after sending to it; closes it when it is over its own cap. */
  const settle = (data: SocketData, status: number): void => {
    if (data.closed) return;
    if (budget.set(data, data.ws!.getBufferedAmount())) closeTooSlow(data, 'maxBackpressureBytes');
    else if (status === DROPPED) closeTooSlow(data, 'frame dropped');
  };
  /** Over the total, the sockets furthest behind go first: one slow tablet never holds the others' memory. */
  const enforceBudget = (): void => {
    for (const data of budget.overBudget()) closeTooSlow(data, 'maxBufferedBytes');
  };
  /** Counts bytes just sent (inside the socket's cork): pings when due; true when the reader is too far behind. */
  const counted = (data: SocketData, bytes: number): boolean => {
    const next = countSent(data.ack, bytes, ackLimits);
    if (next === 'ping') data.ws!.ping(pingPayload(data.ack));
    return next === 'tooSlow';
  };
  /**
   * A socket whose token was revoked gets nothing more: closed with 4001 and why (docs/api.md "Token revocation").
   * True when it was closed (or already was).
   */
  const closeIfRevoked = (data: SocketData, reason = deps.revokedReason(data.principal)): boolean => {
    if (data.closed) return true;
    if (reason === undefined) return false;
    log.info(
      { userId: data.principal.userId, address: data.address, stream: data.stream, reason },
      'socket of a revoked token: closed',
    );
    data.ws!.end(CLOSE_TOKEN_EXPIRED, reason);
    return true;
  };
  const replay = (data: SocketData): void => {
    const ws = data.ws!;
    if (closeIfRevoked(data)) return;
    const wire = {
      // A replay never outruns the window: it waits for the pong (`held`), so `tooSlow` cannot come from here.
      send(frame: Buffer): number {
        const status = ws.send(frame, false);
        if (status !== DROPPED) counted(data, frame.length);
        return status;
      },
      held: () => ws.getBufferedAmount() > 0 || data.ack.sent - data.ack.acked >= ackLimits.pingEveryBytes,
      cork: (fn: () => void) => ws.cork(fn),
    };
    let result: ReturnType<typeof pumpReplay>;
    try {
      result = pumpReplay(wire, data, {
        page: (after, limit) => {
          const last = notDurable.limit(data.key, Number.MAX_SAFE_INTEGER);
          return events
            .page(data.principal.tenantId, data.stream, after, limit, maxFrameBytes)
            .filter((f) => f.seq <= last);
        },
        pageBytes: Math.min(64 * 1024, limits.maxBackpressureBytes),
        maxFrameBytes,
        // The backlog was checked against maxReplayBytes at open; events arriving during the replay get as much
        // again before the reader counts as too slow.
        maxReplayBytes: 2 * limits.maxReplayBytes,
      });
    } catch (err) {
      log.error(
        { err, userId: data.principal.userId, address: data.address, stream: data.stream },
        'socket replay failed',
      );
      data.ws!.end(CLOSE_INTERNAL, 'internal error');
      return;
    }
    settle(data, 1);
    if (result === 'tooSlow') closeTooSlow(data, 'replay');
    enforceBudget();
  };

  app.ws<SocketData>(path, {
    maxPayloadLength: 16 * 1024,
    // A client that stops answering pings (a tablet gone off the network without a close) is dropped after
    // this, freeing its place in maxPerUser and maxPerToken.
    idleTimeout: limits.idleTimeoutSeconds,
    sendPingsAutomatically: true,
    // uWS drops a frame (or the close frame) silently past this: keep it above our own cap plus one frame, so
    // that our cap closes the socket first, with 4008.
    maxBackpressure: limits.maxBackpressureBytes + maxFrameBytes + 64 * 1024,
    closeOnBackpressureLimit: 0,
    upgrade(res, req, context) {
      const input = copyRequest(req, [], res);
      // The same client address as the HTTP routes see (docs/api.md "Behind a reverse proxy (nginx)"): a ticket
      // asked for over HTTP and the socket it opens are one client's.
      deriveClientAddress(input, deps);
      const key = req.getHeader('sec-websocket-key');
      const extensions = req.getHeader('sec-websocket-extensions');
      try {
        const principal = deps.authenticateSocket(input);
        const sinceText = input.query.get('since');
        const since = sinceText === null ? undefined : /^\d{1,15}$/.test(sinceText) ? Number(sinceText) : Number.NaN;
        if (since !== undefined && !Number.isSafeInteger(since)) {
          throw invalidField('since', 'since must be a non-negative integer');
        }
        const venue = input.query.get('venue') ?? undefined;
        if (venue !== undefined) deps.authorizeVenue(principal, venue);
        counts.check(principal);
        const stream = venue === undefined ? principal.userId : venueStream(venue);
        const data: SocketData = {
          principal,
          address: input.remoteAddress,
          since,
          stream,
          venue,
          key: streamKey(principal.tenantId, stream),
          countKeys: counts.keysOf(principal),
          buffered: 0,
          ack: newAckWindow(),
          cursor: 0,
          replaying: false,
          replayedBytes: 0,
          closed: false,
        };
        // RFC 6455 4.2.2: the server selects a subprotocol it speaks, or none. The box defines none, so it
        // never echoes one a client offers (the client then knows its protocol was not agreed).
        res.upgrade(data, key, '', extensions, context);
      } catch (err) {
        if (!(err instanceof AppError)) log.error({ err, address: input.remoteAddress }, 'socket upgrade failed');
        const e = err instanceof AppError ? err : AppError.of('internal', 'internal error');
        res.writeStatus(statusLine(e.status));
        res.writeHeader('content-type', 'application/json; charset=utf-8');
        for (const [k, v] of Object.entries(e.headers)) res.writeHeader(k, v);
        res.end(Buffer.from(JSON.stringify(errorBody(e))));
      }
    },
    open(ws) {
      const data = ws.getUserData();
      const { principal } = data;
      data.ws = ws;
      counts.add(data.countKeys);
      let set = sockets.get(data.key);
      if (!set) {
        set = new Set();
        sockets.set(data.key, set);
      }
      set.add(ws);
      const hello = {
        userId: principal.userId,
        expiresAt: isoOf(principal.expMs),
        ...(data.venue === undefined ? {} : { venue: data.venue }),
      };
      // The HELLO takes no number of its own: its seq is the position this socket starts after, `since` while
      // replaying, else the stream's end, so every frame that follows carries a higher seq (docs/api.md "The
      // socket"). Reading the position and sizing the replay must not throw into uWS, which would end the
      // process: the client gets 1011 and reconnects with ?since=N.
      let end: number;
      let replayTooLarge = false;
      try {
        end = notDurable.limit(data.key, events.position(principal.tenantId, data.stream));
        replayTooLarge =
          data.since !== undefined &&
          data.since < end &&
          events.replayBytes(principal.tenantId, data.stream, data.since, end + 1, maxFrameBytes) >
            limits.maxReplayBytes;
      } catch (err) {
        log.error({ err, userId: principal.userId, address: data.address, stream: data.stream }, 'socket open failed');
        ws.end(CLOSE_INTERNAL, 'internal error');
        return;
      }
      // A `since` beyond the stream's end (a box restored from an older copy) starts at the end: the HELLO then
      // tells the client its number is ahead of the box's. Too large a replay: the HELLO names the end, where
      // the client reconnects from once it has fetched its orders over HTTP.
      data.cursor = data.since === undefined || replayTooLarge ? end : Math.min(data.since, end);
      ws.cork(() => ws.send(Buffer.from(helloFrame(data.cursor, hello)), false));
      if (replayTooLarge) {
        ws.end(CLOSE_REPLAY_TOO_LARGE, REPLAY_TOO_LARGE_REASON);
        return;
      }
      // Revoked between the upgrade's check and now: the HELLO went out, nothing else does.
      if (closeIfRevoked(data)) return;
      data.replaying = data.since !== undefined;
      data.expiryTimer = setTimeout(
        () => ws.end(CLOSE_TOKEN_EXPIRED, TOKEN_EXPIRED_REASON),
        principal.expMs - Date.now(),
      );
      if (data.replaying) replay(data);
      else settle(data, 1);
    },
    drain(ws) {
      const data = ws.getUserData();
      budget.set(data, ws.getBufferedAmount());
      if (data.replaying) replay(data);
    },
    pong(ws, message) {
      const data = ws.getUserData();
      if (data.closed || !countPong(data.ack, Buffer.from(message).toString('latin1'))) return;
      ws.cork(() => counted(data, 0));
      if (data.replaying) replay(data);
    },
    message(ws) {
      // The socket is for pushes; clients send nothing but pings, which uWS answers itself.
      ws.end(CLOSE_MESSAGE_SENT, 'this socket accepts no messages');
    },
    close(ws) {
      const data = ws.getUserData();
      if (data.closed) return;
      data.closed = true;
      clearTimeout(data.expiryTimer);
      budget.remove(data);
      counts.remove(data.countKeys);
      const set = sockets.get(data.key);
      set?.delete(ws);
      if (set?.size === 0) sockets.delete(data.key);
    },
  });

  return {
    /** Frames committed but not yet durable: sockets opening meanwhile start before them (src/ws/held-frames.ts). */
    hold(frames: OutgoingFrame[]): void {
      for (const frame of frames) notDurable.hold(streamKey(frame.tenantId, frame.stream), frame.seq);
    },
    /** Sends committed frames (held ones once durable) to every open socket reading their streams. */
    push(frames: OutgoingFrame[]): void {
      for (const frame of frames) {
        const key = streamKey(frame.tenantId, frame.stream);
        notDurable.release(key, frame.seq);
        const set = sockets.get(key);
        if (!set) continue;
        // Measured (and, if too large, replaced by its notice) and encoded once per frame, not per socket: uWS
        // sends a Buffer as it is, where a string would be converted to UTF-8 again for every socket.
        const bytes = Buffer.from(wireFrame(frame.text, frame.seq, maxFrameBytes));
        for (const ws of set) {
          const data = ws.getUserData();
          // A replaying socket reads this frame from the store in its turn.
          if (data.replaying || frame.seq <= data.cursor) continue;
          // A memory lookup per socket and frame, for a revocation that did not reach `revoke` (belt and braces).
          if (closeIfRevoked(data)) continue;
          let status = 1;
          let behind = false;
          ws.cork(() => {
            status = ws.send(bytes, false);
            behind = status !== DROPPED && counted(data, bytes.length);
          });
          data.cursor = frame.seq;
          settle(data, status);
          if (behind) closeTooSlow(data, 'maxUnacknowledgedBytes');
        }
      }
      enforceBudget();
    },
    /** Closes at once, with 4001 and the token's reason, every open socket of these revoked tokens. */
    revoke(tokens: readonly RevokedToken[]): void {
      const why = new Map(tokens.map((t) => [streamKey(t.tenantId, t.jti), t.reason]));
      const matching: [SocketData, string][] = [];
      for (const set of sockets.values())
        for (const ws of set) {
          const data = ws.getUserData();
          const reason = why.get(streamKey(data.principal.tenantId, data.principal.jti));
          if (reason !== undefined) matching.push([data, reason]);
        }
      // Closed after the walk: closing takes a socket out of its set.
      for (const [data, reason] of matching) closeIfRevoked(data, reason);
    },
    socketCount: (): number => [...sockets.values()].reduce((n, s) => n + s.size, 0),
    bufferedBytes: (): number => budget.total(),
    closeAll(code: number, reason: string): void {
      for (const set of sockets.values()) for (const ws of set) ws.end(code, reason);
    },
  };
}
