import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { json, type Route, route } from '../../http/types.js';
import { newNonce, prove, verifyProof } from './proof.js';
import { keysOf, type Peer, type StandbyState } from './state.js';
import { StandbyStatus } from './status.js';

/** A box's signed word on its role and term, for its peer (GET /standby-api/state?nonce=N). */
export const PeerState = Type.Object({
  boxId: Type.String(),
  role: Type.Union([Type.Literal('primary'), Type.Literal('standby')]),
  term: Type.Integer({ minimum: 0 }),
  /** Signature of the caller's nonce, this box's id, role and term, by the key the peer registered at pairing. */
  signature: Type.String(),
});
export type PeerState = Static<typeof PeerState>;
const check = TypeCompiler.Compile(PeerState);

/** The peer's nonce: the query's schema is its check (src/http/contracts/query.ts). */
const StateQuery = Type.Object({
  nonce: Type.String({ pattern: '^[A-Za-z0-9_-]{22,64}$', description: '22 to 64 base64url characters, new per ask' }),
});

/**
 * The state route, served by a primary and by a standby alike: anyone may ask, but only the peer can check the
 * answer, and a forged one (a hostile LAN client claiming a higher term to fence the primary) fails its check.
 */
export function peerStateRoute(state: () => StandbyState): Route {
  return route({
    method: 'get',
    path: '/standby-api/state',
    auth: 'none',
    body: 'none',
    schema: { query: StateQuery },
    doc: {
      operationId: 'getPeerState',
      summary: "This box's role and term in its pair, signed for the peer's nonce",
      tag: 'standby',
      responses: { 200: { description: 'role and term', schema: PeerState } },
    },
    handle({ query }) {
      const { nonce } = query;
      const s = state();
      return json(200, {
        boxId: s.boxId,
        role: s.role,
        term: s.term,
        signature: prove('state', nonce, s.boxId, keysOf(s).secretKey, `${s.role} ${s.term}`),
      } satisfies PeerState);
    },
  });
}

/** The peer's role and term, checked against its key; undefined when it cannot be reached or does not prove it. */
export async function probePeer(peer: Peer, timeoutMs: number): Promise<PeerState | undefined> {
  const nonce = newNonce();
  try {
    const res = await fetch(`${peer.url}/standby-api/state?nonce=${nonce}`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    const body = (await res.json()) as unknown;
    if (!check.Check(body) || body.boxId !== peer.boxId) return undefined;
    // The role and term are signed too: a box between the two cannot fence the primary with a made-up term.
    return verifyProof('state', nonce, peer.boxId, body.signature, peer.publicKey, `${body.role} ${body.term}`)
      ? body
      : undefined;
  } catch {
    return undefined;
  }
}

/** GET /standby-api/status, on a primary and on a standby alike (no token: what /readyz shows, in full). */
export const standbyStatusRoute = (status: () => StandbyStatus): Route => ({
  method: 'get',
  path: '/standby-api/status',
  auth: 'none',
  body: 'none',
  doc: {
    operationId: 'getStandbyStatus',
    summary: "This box's part in its pair: role, term, peer, replication state and lag",
    tag: 'standby',
    responses: { 200: { description: 'status', schema: StandbyStatus } },
  },
  handle: () => json(200, status()),
});
