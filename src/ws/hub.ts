import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import { copyRequest } from '../http/mount.js';
import { statusLine } from '../http/status-text.js';
import type { HttpRequest, Principal } from '../http/types.js';
import type { Logger } from '../log.js';
import { isoOf } from '../shared/clock.js';
import { AppError, errorBody, invalidField } from '../shared/errors.js';
import { type EventStore, type OutgoingFrame, venueStream } from './event-store.js';

interface SocketData {
  principal: Principal;
  since: number | undefined;
  /** The stream this socket reads: the user's own, or a venue's (`?venue=V`, staff). */
  stream: string;
  venue: string | undefined;
  key: string;
  expiryTimer?: NodeJS.Timeout;
}

export interface HubDeps {
  log: Logger;
  events: EventStore;
  /** Verifies the token of an upgrade request (header or `access_token`); throws a 401 AppError. */
  authenticateSocket(req: HttpRequest): Principal;
  /** Allows a principal to watch every order of a venue (`?venue=V`); throws a 403 or 404 AppError. */
  authorizeVenue(principal: Principal, venueId: string): void;
}

export const TOKEN_EXPIRED = 4001;
const streamKey = (tenantId: string, stream: string): string => `${tenantId}:${stream}`;

/**
 * The live socket: sockets per stream (a user's, or a venue's for staff), HELLO, replay after `?since=N`,
 * pushes, and close at token expiry.
 */
export function createHub(app: TemplatedApp, path: string, deps: HubDeps) {
  const sockets = new Map<string, Set<WebSocket<SocketData>>>();

  app.ws<SocketData>(path, {
    maxPayloadLength: 16 * 1024,
    idleTimeout: 120,
    maxBackpressure: 4 * 1024 * 1024,
    closeOnBackpressureLimit: 1,
    upgrade(res, req, context) {
      const input = copyRequest(req, [], res);
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
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
        const stream = venue === undefined ? principal.userId : venueStream(venue);
        const data: SocketData = { principal, since, stream, venue, key: streamKey(principal.tenantId, stream) };
        res.upgrade(data, key, protocol, extensions, context);
      } catch (err) {
        if (!(err instanceof AppError)) deps.log.error({ err }, 'socket upgrade failed');
        const e = err instanceof AppError ? err : AppError.of('internal', 'internal error');
        res.writeStatus(statusLine(e.status));
        res.writeHeader('content-type', 'application/json; charset=utf-8');
        for (const [k, v] of Object.entries(e.headers)) res.writeHeader(k, v);
        res.end(JSON.stringify(errorBody(e)));
      }
    },
    open(ws) {
      const data = ws.getUserData();
      const { principal } = data;
      let set = sockets.get(data.key);
      if (!set) sockets.set(data.key, (set = new Set()));
      set.add(ws);
      const hello = JSON.stringify({
        userId: principal.userId,
        expiresAt: isoOf(principal.expMs),
        ...(data.venue === undefined ? {} : { venue: data.venue }),
      });
      // The HELLO takes a seq (a write) and the replay reads: a database error here must not be thrown into
      // uWS, which would end the process. The client gets 1011 and reconnects with ?since=N.
      let frames: string[];
      try {
        frames = [deps.events.hello(principal.tenantId, data.stream, hello)];
        // concat, not push(...): a long replay would pass the engine's argument limit.
        if (data.since !== undefined) {
          frames = frames.concat(deps.events.replay(principal.tenantId, data.stream, data.since));
        }
      } catch (err) {
        deps.log.error({ err, userId: principal.userId, stream: data.stream }, 'socket open failed');
        ws.end(1011, 'internal error');
        return;
      }
      ws.cork(() => {
        for (const frame of frames) ws.send(frame);
      });
      data.expiryTimer = setTimeout(() => ws.end(TOKEN_EXPIRED, 'token expired'), principal.expMs - Date.now());
    },
    message(ws) {
      // The socket is for pushes; clients send nothing but pings, which uWS answers itself.
      ws.end(1008, 'this socket accepts no messages');
    },
    close(ws) {
      const data = ws.getUserData();
      clearTimeout(data.expiryTimer);
      const set = sockets.get(data.key);
      set?.delete(ws);
      if (set?.size === 0) sockets.delete(data.key);
    },
  });

  return {
    /** Sends committed frames to every open socket reading their streams. */
    push(frames: OutgoingFrame[]): void {
      for (const frame of frames) {
        const set = sockets.get(streamKey(frame.tenantId, frame.stream));
        if (!set) continue;
        for (const ws of set) ws.cork(() => ws.send(frame.text));
      }
    },
    socketCount: (): number => [...sockets.values()].reduce((n, s) => n + s.size, 0),
    closeAll(code: number, reason: string): void {
      for (const set of sockets.values()) for (const ws of set) ws.end(code, reason);
    },
  };
}
