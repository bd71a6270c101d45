import { Type } from '@sinclair/typebox';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../../config.js';
import { claimDataDir } from '../../db/data-dir-claim.js';
import { listen } from '../../http/listen.js';
import { mountRoutes } from '../../http/mount.js';
import { json, type Route } from '../../http/types.js';
import type { Logger } from '../../log.js';
import { uws } from '../../native/uws.js';
import { AppError } from '../../shared/errors.js';
import { CARRIED_FILES } from '../backup/take.js';
import { createFollower } from './follower.js';
import { LOOPBACK } from './local-status.js';
import { moveAside } from './pair.js';
import { peerStateRoute, standbyStatusRoute } from './probe.js';
import { createTakeover } from './takeover.js';
import { claimTakeover } from './witness.js';
import { loadStandbyState, type StandbyState, saveStandbyState } from './state.js';
import type { StandbyStatus } from './status.js';

export interface StandbyBoxOptions {
  config: Config;
  log: Logger;
  release: { version: string; schema: number };
  /** Resolves when the process is asked to stop (SIGTERM): the standby stops following and exits. */
  stopSignal: Promise<void>;
}

/** How long `venue-box standby promote` waits for the takeover before it answers that it stands (202). */
const TAKEOVER_ANSWER_MS = 8000;

/**
 * A box whose state says standby (docs/operations.md "A standby box"): it follows its primary and answers on its
 * port only for its health (/readyz: 503 `standby`), its status, its peer's probe, and `venue-box standby
 * promote` from this machine. Resolves 'promoted' once it has taken over (its state now says primary, one term
 * up; the caller starts the box on the copy), or 'stopped'.
 */
export async function serveAsStandby(o: StandbyBoxOptions): Promise<'promoted' | 'stopped'> {
  const { config, log } = o;
  const dataDir = resolve(config.dataDir);
  const claim = claimDataDir(dataDir);
  let state: StandbyState = loadStandbyState(dataDir);
  if (state.diverged) {
    // A primary fenced by a newer one: its database is kept, never thrown away. It may hold commands it confirmed
    // while cut off from its standby (counted, when it knew) that the new primary does not hold.
    const dir = moveAside(dataDir, Date.now(), 'diverged');
    const { confirmations } = state.diverged;
    if (confirmations > 0) {
      log.error(
        { dir, confirmations },
        'this box confirmed commands the new primary does not hold while the two were cut off: its database is kept in the directory named, see docs/operations.md "A standby box"',
      );
    } else log.warn({ dir }, 'the database this box had as the primary is kept in the directory named');
    state = { ...state, diverged: null, divergedDir: confirmations > 0 ? (dir ?? null) : null };
    saveStandbyState(dataDir, state);
  }
  const follower = createFollower({
    dataDir,
    state,
    log,
    release: o.release,
    carriedFiles: CARRIED_FILES,
  });
  let promoted!: () => void;
  const promotedNow = new Promise<void>((r) => (promoted = r));

  const status = (): StandbyStatus => {
    const f = follower.status();
    return {
      role: 'standby',
      boxId: state.boxId,
      term: state.term,
      peer: state.peer ? { boxId: state.peer.boxId, url: state.peer.url } : null,
      // 'noCopy': it has never received the primary's database, and could take nothing over.
      state: takeover.pending() ? 'promoting' : f.position === null && f.state !== 'snapshot' ? 'noCopy' : f.state,
      connected: f.state === 'following' || f.state === 'snapshot',
      lagBytes: 0,
      lagSeconds: 0,
      replicatedBytes: f.receivedBytes,
      stalls: 0,
      lastTakeoverAt: state.lastTakeoverAt,
      witness: takeover.witness(),
      primarySilentMs: f.primarySilentMs,
      refusal:
        f.refusal ??
        takeover.waitingFor() ??
        (state.divergedDir
          ? `commands confirmed while cut off from the new primary are kept in ${state.divergedDir}`
          : null),
    };
  };

  /** Stops following and serves on the copy at the next term. */
  async function promote(): Promise<void> {
    await follower.stop();
    state = {
      ...loadStandbyState(dataDir),
      role: 'primary',
      term: state.term + 1,
      lastTakeoverAt: new Date().toISOString(),
    };
    saveStandbyState(dataDir, state);
    log.warn({ term: state.term }, 'this box took over as the primary');
    promoted();
  }
  const takeover = createTakeover({
    log,
    silentMs: config.standby.primarySilentMs,
    follower,
    // The central, when it answers, must agree that the primary's lease has run out (the primary may be alive
    // and only cut off from this box).
    claim: () => claimTakeover({ dataDir, boxId: state.boxId, term: state.term + 1, log }),
    promote,
  });

  const routes: Route[] = [
    {
      method: 'get',
      path: '/healthz',
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'getHealth',
        summary: 'The process is up',
        tag: 'health',
        responses: { 200: { description: 'up' } },
      },
      handle: () => json(200, { status: 'ok' }),
    },
    {
      method: 'get',
      path: '/readyz',
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'getReadiness',
        summary: 'A standby never takes orders: 503 standby',
        tag: 'health',
        responses: { 503: { description: 'standby' } },
      },
      handle() {
        throw AppError.of('unavailable', 'this box is the standby: the primary takes the orders', ['standby']);
      },
    },
    standbyStatusRoute(status),
    peerStateRoute(() => state),
    {
      method: 'post',
      path: '/standby-api/promote',
      auth: 'none',
      body: 'none',
      writes: false,
      doc: {
        operationId: 'promoteToPrimary',
        summary: 'Take over as the primary once the primary is silent (from this machine only)',
        tag: 'standby',
        responses: {
          200: { description: 'promoted', schema: Type.Object({ term: Type.Integer() }) },
          202: {
            description: 'the takeover stands, waiting for the central to let the primary go',
            schema: Type.Object({ pending: Type.Literal(true), message: Type.String() }),
          },
        },
      },
      async handle({ req }) {
        if (!LOOPBACK.has(req.remoteAddress)) throw AppError.of('forbidden', 'promote is taken from this machine only');
        const { done } = await takeover.request();
        // The central's lease runs out within its TTL (5 s by default) if the primary is dead: answered when
        // promoted, or 202 while the request stands.
        const outcome = await Promise.race([done.then(() => 'promoted' as const), sleep(TAKEOVER_ANSWER_MS)]);
        if (outcome === 'promoted') return json(200, { term: state.term });
        return json(202, { pending: true, message: takeover.waitingFor() ?? 'the takeover is under way' });
      },
    },
  ];
  const app = uws().App();
  mountRoutes(app, routes, {
    log,
    maxBodyBytes: 1024,
    authenticate: () => {
      throw AppError.of('unauthorized', 'a standby takes no tokens');
    },
    accepting: () => true,
  });
  const listening = await listen(app, config.host, config.port);
  log.info({ port: listening.port, role: 'standby', primary: state.peer?.url }, 'venue-box listening');
  follower.start();
  const outcome = await Promise.race([
    promotedNow.then(() => 'promoted' as const),
    o.stopSignal.then(() => 'stopped' as const),
  ]);
  // Let the promote answer go out before the port closes (the box opens it again at once).
  await new Promise((r) => setTimeout(r, 50));
  listening.close();
  app.close?.();
  takeover.stop();
  await follower.stop();
  claim.release();
  return outcome;
}
