import { createHash, randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { bearerOf } from '../http/listen.js';
import { type HttpRequest, json, type Principal, type Route } from '../http/types.js';
import { throttleAddress } from '../shared/oauth/throttle.js';
import { AppError, unauthorized } from '../shared/errors.js';

/** The path a browser asks for a ticket at (docs/api.md "The socket"). */
export const SOCKET_TICKET_PATH = '/ordering-api/api/socket-ticket';

export interface SocketTicketLimits {
  /** A ticket's life; never longer than its token's. */
  ttlMs: number;
  /** Outstanding (issued, not used, not expired) tickets of one user, of one client address, of the box. */
  maxPerUser: number;
  maxPerAddress: number;
  maxTotal: number;
}

/**
 * A reconnecting screen needs one ticket at a time; a venue's tablets behind one address (a proxy the box does
 * not trust, a NAT) a few each. A ticket costs about 2 KB of heap with its token and keys (measured: 10,000 took
 * 14 MB besides their tokens), so the box holds at most 4,096 (about 8 MB), which takes 64 client addresses
 * asking at full speed to fill.
 */
export const SOCKET_TICKET_LIMITS: SocketTicketLimits = {
  ttlMs: 30_000,
  maxPerUser: 8,
  maxPerAddress: 64,
  maxTotal: 4096,
};

interface Held {
  /** The access token the ticket stands for: the socket is authenticated with it at the upgrade. */
  token: string;
  userKey: string;
  addressKey: string;
  issuedMs: number;
  expiresMs: number;
}

/**
 * Single-use socket tickets (docs/api.md "The socket"): a browser cannot put its token in a WebSocket's headers,
 * and one in the URL (`?access_token=`) ends up in proxies' access logs and browser tooling. A ticket is asked
 * for with the token in `Authorization` and opens one socket within `ttlMs` (`?ticket=`), so what a log keeps of
 * the URL is worthless seconds later. Kept in memory only, by SHA-256 (a heap dump or a debug log of the map
 * holds no usable ticket); a restart forgets them, and a screen asks again.
 *
 * The ticket stands for its token: the upgrade verifies that token as it would one sent directly (expiry,
 * revocation, tenant), and the socket lives by its `exp` (4001) with its user, scope and `jti` (maxPerToken).
 */
export function createSocketTickets(now: () => number = Date.now, limits = SOCKET_TICKET_LIMITS) {
  // In issue order, so the front holds the oldest: everything issued more than ttlMs ago has expired.
  const held = new Map<string, Held>();
  const perUser = new Map<string, number>();
  const perAddress = new Map<string, number>();
  const bump = (counts: Map<string, number>, key: string, by: number): void => {
    const n = (counts.get(key) ?? 0) + by;
    if (n > 0) counts.set(key, n);
    else counts.delete(key);
  };
  const forget = (hash: string, h: Held): void => {
    held.delete(hash);
    bump(perUser, h.userKey, -1);
    bump(perAddress, h.addressKey, -1);
  };
  const sweep = (t: number): void => {
    for (const [hash, h] of held) {
      if (h.issuedMs + limits.ttlMs > t) break;
      forget(hash, h);
    }
  };
  const refuse = (what: string, max: number, t: number, oldestOf: (h: Held) => boolean): never => {
    let oldest = t;
    for (const h of held.values())
      if (oldestOf(h)) {
        oldest = h.issuedMs;
        break;
      }
    const retryAfter = Math.max(1, Math.ceil((oldest + limits.ttlMs - t) / 1000));
    throw AppError.of('tooManyRequests', `too many unused socket tickets ${what} (at most ${max}): use one first`, [], {
      'Retry-After': String(retryAfter),
    });
  };

  return {
    /** A new ticket for `token` (already verified as `principal`) asked from `address` (the client's). */
    issue(token: string, principal: Principal, address: string): { ticket: string; expiresIn: number } {
      const t = now();
      sweep(t);
      const userKey = `${principal.tenantId}\0${principal.userId}`;
      const addressKey = throttleAddress(address);
      if ((perUser.get(userKey) ?? 0) >= limits.maxPerUser)
        refuse('for this user', limits.maxPerUser, t, (h) => h.userKey === userKey);
      if ((perAddress.get(addressKey) ?? 0) >= limits.maxPerAddress)
        refuse('from this address', limits.maxPerAddress, t, (h) => h.addressKey === addressKey);
      if (held.size >= limits.maxTotal) refuse('on this box', limits.maxTotal, t, () => true);
      const ticket = randomBytes(32).toString('base64url');
      const expiresMs = Math.min(t + limits.ttlMs, principal.expMs);
      held.set(hashOf(ticket), { token, userKey, addressKey, issuedMs: t, expiresMs });
      bump(perUser, userKey, 1);
      bump(perAddress, addressKey, 1);
      return { ticket, expiresIn: Math.max(0, Math.floor((expiresMs - t) / 1000)) };
    },
    /** The token a ticket stands for, once: undefined when unknown, used or expired. */
    redeem(ticket: string): string | undefined {
      const hash = hashOf(ticket);
      const h = held.get(hash);
      if (!h) return undefined;
      forget(hash, h);
      return h.expiresMs > now() ? h.token : undefined;
    },
    /** Outstanding tickets, expired ones not yet swept included. */
    size: (): number => held.size,
  };
}
export type SocketTickets = ReturnType<typeof createSocketTickets>;

/**
 * The socket's credentials, in this order: `Authorization: Bearer` (any client that can set headers), `?ticket=`
 * (the screens), `?access_token=` (older browser clients: the token lands in access logs and browser tooling). A
 * ticket is spent by the attempt, whether the upgrade then succeeds or is refused for another reason.
 */
export function socketAuthenticator(tickets: SocketTickets, verify: (token: string | undefined) => Principal) {
  return (req: HttpRequest): Principal => {
    if (req.headers.authorization !== undefined) return verify(bearerOf(req));
    const ticket = req.query.get('ticket');
    if (ticket === null) return verify(req.query.get('access_token') ?? undefined);
    const token = tickets.redeem(ticket);
    if (token === undefined) throw unauthorized('unknown, used or expired socket ticket');
    return verify(token);
  };
}

const hashOf = (ticket: string): string => createHash('sha256').update(ticket).digest('base64url');

const TicketAnswer = Type.Object({
  ticket: Type.String({ description: 'opens one socket: `GET /ordering-api/ws?ticket=...`' }),
  expiresIn: Type.Integer({ description: 'seconds the ticket stays usable (at most 30, never past the token)' }),
});

/** `POST /ordering-api/api/socket-ticket` (docs/api.md "The socket"). */
export function socketTicketRoute(tickets: SocketTickets): Route {
  return {
    method: 'post',
    path: SOCKET_TICKET_PATH,
    auth: 'bearer',
    body: 'none',
    // Memory only: a ticket is handed out while the data disk is full too.
    writes: false,
    doc: {
      operationId: 'createSocketTicket',
      summary: 'A single-use ticket that opens the socket without the token in its URL',
      description:
        "Open `/ordering-api/ws?ticket=<ticket>` within `expiresIn` seconds; the socket is then the token's, as if " +
        'the token had been sent. A used, unknown or expired ticket is refused with 401 at the upgrade. At most 8 ' +
        'unused tickets per user and 64 per client address: past that, 429 with Retry-After.',
      responses: { 200: { description: 'the ticket', schema: TicketAnswer } },
    },
    handle: ({ req, principal }) => json(200, tickets.issue(bearerOf(req)!, principal, req.remoteAddress)),
  };
}
