import { Type } from '@sinclair/typebox';
import { resolve } from 'node:path';
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
import { moveAside } from './pair.js';
import { peerStateRoute } from './probe.js';
import { loadStandbyState, type StandbyState, saveStandbyState } from './state.js';
import { StandbyStatus } from './status.js';

export interface StandbyBoxOptions {
  config: Config;
  log: Logger;
  release: { version: string; schema: number };
  /** Resolves when the process is asked to stop (SIGTERM): the standby stops following and exits. */
  stopSignal: Promise<void>;
}

/** Loopback addresses, the only ones `venue-box standby promote` may come from (keepalived runs on the box). */
const LOOPBACK = new Set(['127.0.0.1', '::1', '0000:0000:0000:0000:0000:0000:0000:0001', '::ffff:127.0.0.1']);

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
    // A primary fenced after confirming what its standby never held: kept for the operator, never thrown away.
    const dir = moveAside(dataDir, Date.now(), 'diverged');
    log.error(
      { dir, confirmations: state.diverged.confirmations },
      'this box confirmed commands the new primary does not hold while the two were cut off: its database is kept in the directory named, see docs/operations.md "A standby box"',
    );
    state = { ...state, diverged: null, divergedDir: dir ?? null };
    saveStandbyState(dataDir, state);
  }
  const follower = createFollower({
    dataDir,
    state,
    log,
    release: o.release,
    carriedFiles: CARRIED_FILES,
  });
  let promoting: Promise<void> | undefined;
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
      state: promoting ? 'promoting' : f.position === null && f.state !== 'snapshot' ? 'noCopy' : f.state,
      connected: f.state === 'following' || f.state === 'snapshot',
      lagBytes: 0,
      lagSeconds: 0,
      replicatedBytes: f.receivedBytes,
      stalls: 0,
      lastTakeoverAt: state.lastTakeoverAt,
      primarySilentMs: f.primarySilentMs,
      refusal:
        f.refusal ??
        (state.divergedDir
          ? `commands confirmed while cut off from the new primary are kept in ${state.divergedDir}`
          : null),
    };
  };

  /** Waits (up to the silence it needs and a second) for the primary to be silent, then takes over. */
  async function promote(): Promise<void> {
    const need = config.standby.primarySilentMs;
    const deadline = Date.now() + need + 1000;
    for (;;) {
      const f = follower.status();
      if (f.position === null) throw AppError.of('conflict', 'this standby has no copy of the primary yet');
      if (f.primarySilentMs === null || f.primarySilentMs >= need) break;
      if (Date.now() >= deadline)
        throw AppError.of('conflict', `the primary spoke ${f.primarySilentMs} ms ago: it is alive, no takeover`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await follower.stop();
    state = {
      ...loadStandbyState(dataDir),
      role: 'primary',
      term: state.term + 1,
      lastTakeoverAt: new Date().toISOString(),
    };
    saveStandbyState(dataDir, state);
    log.warn({ term: state.term }, 'this box took over as the primary');
  }

  const routes: Route[] = [
    {
      method: 'get',
      path: '/healthz',
      auth: 'none',
      body: 'none',
      doc: { summary: 'The process is up', tag: 'health', responses: { 200: { description: 'up' } } },
      handle: () => json(200, { status: 'ok' }),
    },
    {
      method: 'get',
      path: '/readyz',
      auth: 'none',
      body: 'none',
      doc: {
        summary: 'A standby never takes orders: 503 standby',
        tag: 'health',
        responses: { 503: { description: 'standby' } },
      },
      handle() {
        throw AppError.of('unavailable', 'this box is the standby: the primary takes the orders', ['standby']);
      },
    },
    {
      method: 'get',
      path: '/standby-api/status',
      auth: 'none',
      body: 'none',
      doc: {
        summary: "This box's part in its pair",
        tag: 'standby',
        responses: { 200: { description: 'status', schema: StandbyStatus } },
      },
      handle: () => json(200, status()),
    },
    peerStateRoute(() => state),
    {
      method: 'post',
      path: '/standby-api/promote',
      auth: 'none',
      body: 'none',
      writes: false,
      doc: {
        summary: 'Take over as the primary once the primary is silent (from this machine only)',
        tag: 'standby',
        responses: { 200: { description: 'promoted', schema: Type.Object({ term: Type.Integer() }) } },
      },
      async handle({ req }) {
        if (!LOOPBACK.has(req.remoteAddress)) throw AppError.of('forbidden', 'promote is taken from this machine only');
        promoting ??= promote().catch((err: unknown) => {
          promoting = undefined;
          throw err;
        });
        await promoting;
        promoted();
        return json(200, { term: state.term });
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
  await follower.stop();
  claim.release();
  return outcome;
}
