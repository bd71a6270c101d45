import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TemplatedApp } from 'uWebSockets.js';
import type { Config } from '../../config.js';
import type { CheckpointerControl } from '../../db/checkpointer.js';
import { DB_FILE, type Db } from '../../db/open.js';
import type { WalSync } from '../../db/wal-sync.js';
import type { Route } from '../../http/types.js';
import { json } from '../../http/types.js';
import type { Logger } from '../../log.js';
import { AppError } from '../../shared/errors.js';
import { compile } from '../../shared/validate.js';
import { CARRIED_FILES } from '../backup/take.js';
import { Type } from '@sinclair/typebox';
import { acceptJoin, JoinRequest, JoinResponse } from './pair.js';
import { LOOPBACK } from './local-status.js';
import { createReplicator, type ReplicationMode, type Replicator } from './primary.js';
import { mountStandbyStream } from './primary-stream.js';
import { probePeer, standbyStatusRoute } from './probe.js';
import { loadStandbyState, type StandbyState, saveStandbyState } from './state.js';
import type { StandbyStatus } from './status.js';
import { createWitness } from './witness.js';

export interface PrimarySideOptions {
  db: Db;
  dataDir: string;
  log: Logger;
  options: Config['standby'];
  release: { version: string; schema: number };
  now(): number;
  onModeChange?(mode: ReplicationMode): void;
}

const validJoin = compile(JoinRequest);

/** How often a primary with a peer asks it for its role and term (a primary of a higher term fences this one). */
const PROBE_MS = 2000;

/** How long a primary starting asks a peer that does not answer before it serves (probeAtStart). */
const STARTUP_PROBE_MS = 5000;

/** How long a confirmation waits for a lapsed lease to be renewed before it is refused (503). */
const WITNESS_WAIT_MS = 10_000;

const fencedError = (message: string): AppError =>
  AppError.of('unavailable', `this box no longer confirms orders: ${message}`, ['fenced']);

/**
 * The primary's part of a pair (docs/operations.md "A standby box"): pairing, the stream to the standby, the
 * barrier every confirmation passes (src/db/wal-sync.ts wrapped), and fencing: once a box of a higher term is
 * seen (the standby took over while this box was cut off), this box stops confirming and leaves, to start again
 * as the new primary's standby.
 */
export function createPrimarySide(o: PrimarySideOptions) {
  let state: StandbyState = loadStandbyState(o.dataDir);
  let replicator: Replicator | undefined;
  let checkpointer: CheckpointerControl | undefined;
  let fenced: { term: number; message: string } | undefined;
  let onFenced: ((f: { term: number; message: string }) => void) | undefined;
  let probeTimer: NodeJS.Timeout | undefined;
  // The central as the witness: a primary with a standby holds a lease there (src/modules/standby/witness.ts).
  const witness = createWitness({
    dataDir: o.dataDir,
    boxId: () => state.boxId,
    term: () => state.term,
    paired: () => state.peer !== null && state.role === 'primary',
    log: o.log,
    onFenced: (term, message) => fence(term, message),
  });

  const ensureReplicator = (): Replicator | undefined => {
    if (replicator || !state.peer || state.role !== 'primary') return replicator;
    replicator = createReplicator({
      db: o.db,
      dbFile: join(o.dataDir, DB_FILE),
      dataDir: o.dataDir,
      log: o.log,
      carriedFiles: CARRIED_FILES,
      stallMs: o.options.stallMs,
      maxLagBytes: o.options.maxLagBytes,
      term: () => state.term,
      onModeChange: o.onModeChange,
    });
    if (checkpointer) replicator.useCheckpointer(checkpointer);
    return replicator;
  };
  ensureReplicator();

  /** A higher term exists: this box becomes a standby of it (at its next start) and confirms nothing more. */
  function fence(term: number, message: string): void {
    if (fenced) return;
    fenced = { term, message };
    const alone = replicator?.status().aloneConfirmations ?? 0;
    o.log.error({ term, ownTerm: state.term, alone }, `fenced: ${message}; this box becomes the standby`);
    state = {
      ...loadStandbyState(o.dataDir),
      role: 'standby',
      term,
      // Kept in every case: after a restart this box no longer knows what it confirmed alone before it.
      diverged: { confirmations: alone, at: new Date(o.now()).toISOString() },
    };
    saveStandbyState(o.dataDir, state);
    onFenced?.(fenced);
  }

  /**
   * What the standby does not hold is confirmed only under the central's lease (or with no witness to ask): a
   * lease that lapsed waits here for the next renewal, which grants it, finds the central gone, or fences.
   */
  function waitForWitness(done: (err?: Error) => void): void {
    const started = performance.now();
    const look = (): void => {
      if (fenced) {
        done(fencedError(fenced.message));
        return;
      }
      if (witness.mayConfirmAlone()) {
        done();
        return;
      }
      if (performance.now() - started > WITNESS_WAIT_MS) {
        done(fencedError('no lease from the central'));
        return;
      }
      setTimeout(look, 50);
    };
    look();
  }

  /** Whether the peer answered (and fenced this box when it is a primary of a higher term). */
  async function probe(): Promise<boolean> {
    if (!state.peer || fenced) return true;
    const seen = await probePeer(state.peer, 1000);
    if (seen && seen.role === 'primary' && seen.term > state.term) {
      fence(seen.term, `the peer box is the primary at term ${seen.term}`);
    }
    return seen !== undefined;
  }

  /**
   * The probe before the port opens: a peer that does not answer is asked again for STARTUP_PROBE_MS. A standby
   * that has just taken over answers nothing between its takeover and its start as the primary (its port changes
   * hands): a primary started again in that moment would otherwise serve beside it. A peer that is down costs
   * this box's start those seconds, once; a box that has just taken over (`patient` false) asks it once.
   */
  async function probeAtStart(patient: boolean): Promise<void> {
    const until = performance.now() + (patient ? STARTUP_PROBE_MS : 0);
    while (!(await probe()) && performance.now() < until) await sleep(250);
  }

  return {
    /** Asked before the box serves (probeAtStart), then every PROBE_MS: is the peer a primary of a higher term? */
    probe: probeAtStart,
    startProbing(): void {
      probeTimer = setInterval(() => void probe().catch(() => undefined), PROBE_MS);
      probeTimer.unref();
      witness.start();
    },
    onFenced(fn: (f: { term: number; message: string }) => void): void {
      onFenced = fn;
      if (fenced) fn(fenced);
    },
    fenced: () => fenced,
    /** This box's pair state as it is now (the peer's probe reads it). */
    state: (): StandbyState => state,
    useCheckpointer(c: CheckpointerControl): void {
      checkpointer = c;
      replicator?.useCheckpointer(c);
    },
    /** The checkpointer's quiet moment found the WAL copied back whole (src/db/checkpointer.ts `onCaughtUp`). */
    caughtUp: (): void => replicator?.caughtUp(),
    /**
     * The WAL's fsync, and the standby's acknowledgement of everything committed so far, at the same time: the
     * frames go to the standby at once, not after this box's own fsync (as PostgreSQL's walsender sends before its
     * flush), so a confirmation waits for the longer of the two, not for both in turn. The standby may then hold a
     * transaction this box loses to a power cut; it is one nobody was told of, and the standby's position no
     * longer matches this WAL, so it gets a new snapshot (docs/architecture.md "A standby box").
     */
    wrap(inner: WalSync): WalSync {
      return {
        afterSync(done) {
          const r = replicator;
          // A box never paired (most of them): the fsync alone, as before there were standbys.
          if (!r) {
            inner.afterSync(done);
            return;
          }
          let synced = false;
          let inStep: boolean | undefined;
          let answered = false;
          const answer = (err?: Error): void => {
            if (answered) return;
            answered = true;
            done(err);
          };
          const both = (): void => {
            if (!synced || inStep === undefined) return;
            if (fenced) {
              answer(fencedError(fenced.message));
              return;
            }
            if (inStep || witness.mayConfirmAlone()) {
              answer();
              return;
            }
            waitForWitness(answer);
          };
          r.barrier((acked) => {
            inStep = acked;
            both();
          });
          inner.afterSync((err) => {
            if (err) {
              answer(err);
              return;
            }
            synced = true;
            both();
          });
        },
        idle: () => inner.idle() && (replicator?.idle() ?? true),
      };
    },
    mountStream(app: TemplatedApp): void {
      mountStandbyStream(app, {
        log: o.log,
        state: () => state,
        release: o.release,
        canResume: (p) => ensureReplicator()?.canResume(p) ?? false,
        attach: (link, p) => ensureReplicator()?.attach(link, p),
        acknowledged: (link, id) => replicator?.acknowledged(link, id),
        detach: (link) => replicator?.detach(link),
        fenced: (term, message) => fence(term, message),
      });
    },
    routes(status: () => StandbyStatus): Route[] {
      return [
        standbyStatusRoute(status),
        {
          method: 'post',
          path: '/standby-api/promote',
          auth: 'none',
          body: 'none',
          writes: false,
          doc: {
            operationId: 'promoteToPrimary',
            summary: 'On a primary, promote has nothing to do: keepalived may ask again (from this machine only)',
            tag: 'standby',
            responses: { 200: { description: 'already the primary', schema: Type.Object({ term: Type.Integer() }) } },
          },
          handle({ req }) {
            if (!LOOPBACK.has(req.remoteAddress))
              throw AppError.of('forbidden', 'promote is taken from this machine only');
            if (fenced) throw fencedError(fenced.message);
            return json(200, { term: state.term });
          },
        },
        {
          method: 'post',
          path: '/standby-api/join',
          auth: 'none',
          body: 'json',
          writes: false,
          schema: { body: JoinRequest },
          doc: {
            operationId: 'joinStandby',
            summary: 'Pair a standby box with this one, with the code `venue-box standby code` printed',
            tag: 'standby',
            responses: { 200: { description: 'paired: the primary as the standby records it', schema: JoinResponse } },
          },
          handle({ body }) {
            const joined = acceptJoin(o.dataDir, validJoin(body), o.release, o.now());
            state = joined.state;
            replicator?.close();
            replicator = undefined;
            ensureReplicator();
            o.log.info({ standby: joined.state.peer?.boxId, url: joined.state.peer?.url }, 'a standby is paired');
            return json(200, joined.response);
          },
        },
      ];
    },
    status(): StandbyStatus {
      const r = replicator?.status();
      return {
        role: state.peer ? 'primary' : 'single',
        boxId: state.boxId,
        term: state.term,
        peer: state.peer ? { boxId: state.peer.boxId, url: state.peer.url } : null,
        state: fenced ? 'fenced' : (r?.mode ?? 'alone'),
        connected: r !== undefined && r.mode !== 'alone',
        lagBytes: r?.lagBytes ?? 0,
        lagSeconds: r?.lagSeconds ?? 0,
        replicatedBytes: r?.sentBytes ?? 0,
        stalls: r?.stalls ?? 0,
        lastTakeoverAt: state.lastTakeoverAt,
        witness: witness.describe(),
        primarySilentMs: null,
        refusal: fenced?.message ?? null,
      };
    },
    close(): void {
      clearInterval(probeTimer);
      witness.stop();
      replicator?.close();
    },
  };
}
export type PrimarySide = ReturnType<typeof createPrimarySide>;
