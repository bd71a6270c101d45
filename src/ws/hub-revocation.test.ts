import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import WebSocket from 'ws';
import { migrate } from '../db/migrate.js';
import type { HttpRequest, Principal } from '../http/types.js';
import { createLogger } from '../log.js';
import { createEventStore } from '../modules/events/event-store.js';
import { uws } from '../native/uws.js';
import { unauthorized } from '../shared/errors.js';
import { menuChanged } from '../shared/socket-protocol.js';
import { createHub } from './hub.js';

// docs/api.md "Token revocation": the hub closes a revoked token's sockets when told (`revoke`), and asks before
// every push besides, so a revocation that reached the list by any other path still stops the frames. A real
// uWS app on port 0 and a real `ws` client; the token is its jti, the revocation list a map the test fills.
const TENANT = '00000000-0000-4000-8000-000000000001';
const revoked = new Map<string, string>();
const db = new Database(':memory:');
migrate(db);
const events = createEventStore(db);
const app = uws().App();
const hub = createHub(app, '/ws', {
  log: createLogger('silent'),
  events,
  sockets: {
    maxBufferedBytes: 16 * 1024 * 1024,
    maxBackpressureBytes: 1024 * 1024,
    maxUnacknowledgedBytes: 256 * 1024,
    maxReplayBytes: 4 * 1024 * 1024,
    maxFrameBytes: 512 * 1024,
    maxPerUser: 16,
    maxPerToken: 8,
    idleTimeoutSeconds: 120,
  },
  authenticateSocket(req: HttpRequest): Principal {
    const jti = req.headers.authorization?.replace(/^Bearer /, '');
    if (!jti) throw unauthorized('no token');
    return { tenantId: TENANT, userId: 'u1', scope: ['read'], staff: false, expMs: Date.now() + 60_000, jti };
  },
  authorizeVenue() {},
  revokedReason: (p) => revoked.get(p.jti),
});
let port = 0;
let listenSocket: unknown;
beforeAll(async () => {
  await new Promise<void>((resolve) =>
    app.listen('127.0.0.1', 0, (s) => {
      listenSocket = s;
      port = uws().us_socket_local_port(s);
      resolve();
    }),
  );
});
afterAll(() => {
  if (listenSocket) uws().us_listen_socket_close(listenSocket as never);
  db.close();
});

/** A socket of token `jti`, its frame types as they arrive, and its close. */
async function open(jti: string) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { authorization: `Bearer ${jti}` } });
  const types: string[] = [];
  const hello = new Promise<void>((resolve) =>
    ws.on('message', (data) => {
      types.push((JSON.parse(String(data)) as { type: string }).type);
      resolve();
    }),
  );
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  await hello;
  return { ws, types, closed };
}
const push = (): void =>
  hub.push([events.append(TENANT, 'u1', menuChanged({ venue: 'v', menu: 'm', rev: 1 }), Date.now())]);
const settled = () => new Promise((r) => setTimeout(r, 100));
/** The close, or 'still open' after a second. */
const closedSoon = (s: { closed: Promise<{ code: number; reason: string }> }) =>
  Promise.race([s.closed, new Promise((r) => setTimeout(() => r('still open'), 1000))]);

test('a push never reaches a socket whose token the list says is revoked: it closes with 4001 and why', async () => {
  const doomed = await open('jti-a');
  const other = await open('jti-b');
  revoked.set('jti-a', 'user retired');
  push();
  expect(await closedSoon(doomed)).toEqual({ code: 4001, reason: 'user retired' });
  await settled();
  expect(doomed.types).toEqual(['HELLO']);
  expect(other.types).toEqual(['HELLO', 'MENU_CHANGED']);
  other.ws.close();
});

test('revoke closes at once the sockets of the tokens named, and only those', async () => {
  const doomed = [await open('jti-c'), await open('jti-c')];
  const other = await open('jti-d');
  hub.revoke([{ tenantId: TENANT, jti: 'jti-c', reason: 'token revoked' }]);
  for (const s of doomed) expect(await closedSoon(s)).toEqual({ code: 4001, reason: 'token revoked' });
  // Another tenant's token of the same jti is another token.
  hub.revoke([{ tenantId: '00000000-0000-4000-8000-000000000002', jti: 'jti-d', reason: 'token revoked' }]);
  push();
  await settled();
  expect(other.types).toEqual(['HELLO', 'MENU_CHANGED']);
  expect(hub.socketCount()).toBe(1);
  other.ws.close();
});
