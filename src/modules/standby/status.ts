import { type Static, Type } from '@sinclair/typebox';

/**
 * What a box says of its part in a pair, on /readyz, /metrics, the manager screen and `venue-box standby status`
 * (docs/operations.md "A standby box"). One schema: the type, the check of the CLI's reading, the docs. The screens
 * import this file too: nothing of the server's belongs here (its route is in probe.ts).
 */
export const StandbyStatus = Type.Object({
  /** 'single': never paired. */
  role: Type.Union([Type.Literal('primary'), Type.Literal('standby'), Type.Literal('single')]),
  boxId: Type.String(),
  term: Type.Integer(),
  peer: Type.Union([Type.Object({ boxId: Type.String(), url: Type.String() }), Type.Null()]),
  /**
   * On a primary: 'synchronous' (every confirmation is on both boxes), 'catchingUp', 'snapshot', 'alone' (no
   * standby attached), 'fenced' (a newer primary exists: it stops). On a standby: 'connecting', 'snapshot',
   * 'following', 'refused', 'noCopy' (nothing received yet), 'promoting'.
   */
  state: Type.String(),
  connected: Type.Boolean(),
  /** On a primary: bytes sent to the standby and not yet acknowledged, and the oldest one's age. */
  lagBytes: Type.Number(),
  lagSeconds: Type.Number(),
  /** Bytes sent (primary) or received (standby) since start. */
  replicatedBytes: Type.Number(),
  /** Confirmations that stopped waiting for the standby after `standby.stallMs`. */
  stalls: Type.Number(),
  lastTakeoverAt: Type.Union([Type.String(), Type.Null()]),
  /**
   * The central as witness (docs/architecture.md "A standby box"): on a primary 'held', 'lapsed', 'unreachable'
   * or 'none' (not enrolled); on a standby, what its last claim found.
   */
  witness: Type.Optional(Type.String()),
  /** On a standby: how long ago the primary last said something. */
  primarySilentMs: Type.Union([Type.Number(), Type.Null()]),
  /** Why the pair is not working, when it is not (a release mismatch, a fence). */
  refusal: Type.Union([Type.String(), Type.Null()]),
});
export type StandbyStatus = Static<typeof StandbyStatus>;

/**
 * The part of the status the box's health shows (the `standby` object of /readyz's 200, `venue-box sync status`):
 * enough to tell whether orders are on one box or two, without the identities and counters of the full status.
 */
export const StandbySummary = Type.Object(
  {
    role: StandbyStatus.properties.role,
    state: Type.String(),
    /** The peer's address (http://address:port), null while not paired. */
    peer: Type.Union([Type.String(), Type.Null()]),
    lagBytes: Type.Number(),
    lagSeconds: Type.Number(),
    lastTakeoverAt: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
export type StandbySummary = Static<typeof StandbySummary>;

export const summarizeStandby = (s: StandbyStatus): StandbySummary => ({
  role: s.role,
  state: s.state,
  peer: s.peer?.url ?? null,
  lagBytes: s.lagBytes,
  lagSeconds: s.lagSeconds,
  lastTakeoverAt: s.lastTakeoverAt,
});

/** The status as `venue-box standby status` prints it. */
export function formatStandbyStatus(s: StandbyStatus): string {
  const lines = [
    `role:          ${s.role}${s.role === 'single' ? ' (not paired)' : ''}`,
    `box:           ${s.boxId}`,
    `term:          ${s.term}`,
    `peer:          ${s.peer ? `${s.peer.url} (${s.peer.boxId})` : '-'}`,
    `state:         ${s.state}${s.connected ? ', connected' : ''}`,
  ];
  if (s.role === 'primary') lines.push(`lag:           ${s.lagBytes} bytes, ${s.lagSeconds.toFixed(3)} s`);
  if (s.role === 'standby')
    lines.push(`primary heard: ${s.primarySilentMs === null ? 'never' : `${s.primarySilentMs} ms ago`}`);
  lines.push(`replicated:    ${s.replicatedBytes} bytes`);
  lines.push(`stalls:        ${s.stalls}`);
  lines.push(`last takeover: ${s.lastTakeoverAt ?? 'never'}`);
  if (s.witness) lines.push(`witness:       ${s.witness}`);
  if (s.refusal) lines.push(`problem:       ${s.refusal}`);
  return `${lines.join('\n')}\n`;
}
