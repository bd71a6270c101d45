import type { Logger } from '../../../log.js';
import type { CatalogueResponse } from '../../../shared/catalogue-protocol.js';
import { RELEASE_CHECKS, type ReleaseTarget } from '../../../shared/release-schemas.js';
import { CatalogueApplyError, ChecksumMismatch } from './apply.js';
import type { CatalogueState } from './repo.js';
import { createCentralLoop, type StepContext } from '../central-loop.js';
import { type CentralError, centralClient } from '../client.js';
import { loadDevice } from '../enrolment/device.js';
import { deviceSigner } from '../enrolment/signer.js';
import { createPollWait } from './cut-poll.js';

export interface PullerOptions {
  /** How long the central may hold a poll open when nothing changed (seconds). */
  waitSeconds: number;
  requestTimeoutMs: number;
  retryMinMs: number;
  retryMaxMs: number;
  /** How often a box that is not enrolled looks for its device file. */
  enrolPollMs: number;
}

export interface PullerDeps {
  dataDir: string;
  log: Logger;
  options: PullerOptions;
  state(): CatalogueState;
  /** Applies an answer in one transaction with its cursor; throws (nothing written) when it cannot. */
  apply(tenantId: string, res: CatalogueResponse): { items: number; venues: number };
  setError(message: string): void;
  /** Forgets the recorded error (a poll went through). */
  clearError(): void;
  /** The release the central names for this box in each answer (docs/operations.md "Updating boxes"). */
  offer?(target: ReleaseTarget | null | undefined): void;
}

/**
 * The catalogue puller (docs/sync.md "Down: the catalogue"), beside the sender: one long poll in flight, asking for
 * the changes after the box's cursor. A change set that cannot be applied leaves the box on its last good
 * catalogue and is asked for again after the central loop's backoff (docs/sync.md "Talking to the central"); a
 * checksum that differs asks for a snapshot.
 */
export function createPuller(deps: PullerDeps) {
  const { log, options } = deps;
  /** After a checksum that differs: the next poll asks for a snapshot. */
  let snapshot = false;
  /** The wait asked for: options.waitSeconds, shorter while a proxy cuts polls (src/modules/sync/catalogue/cut-poll.ts). */
  const wait = createPollWait(options.waitSeconds);
  /**
   * The rollout of the release the central last named (`none`: none), sent with the next poll so that a rollout
   * changed between two polls is answered at once rather than at the poll's end (docs/sync.md "Releases and
   * rollouts"). Unknown before the first answer: that poll waits as usual.
   */
  let knownRollout: string | undefined;

  /** One long poll and what it brought; the next poll follows at once. */
  async function step({ device: d, client }: StepContext): Promise<number> {
    const state = deps.state();
    // A box of another tenant before (a data dir moved between boxes) starts from a snapshot.
    const after = state.tenantId === d.tenant ? state.rev : 0;
    const started = Date.now();
    const waitS = wait.seconds();
    let res: CatalogueResponse;
    try {
      res = await centralClient.catalogue(
        d,
        deviceSigner(d.secretKey),
        { after, waitS, snapshot, release: knownRollout },
        { ...client, requestTimeoutMs: client.requestTimeoutMs + waitS * 1000 },
      );
    } catch (err) {
      const elapsedMs = Date.now() - started;
      const shorter = wait.failed(err, elapsedMs);
      if (shorter === undefined) throw err;
      // Not the central's doing and nothing lost: ask again at once, ending before the cut from now on.
      log.warn(
        { err: (err as Error).message, afterMs: elapsedMs, waitSeconds: shorter },
        'catalogue polls are cut on their way (a proxy idle timeout?): asking for shorter waits',
      );
      if (state.lastError !== null) deps.clearError();
      return 0;
    }
    wait.answered();
    if (typeof res !== 'object' || res === null)
      throw new CatalogueApplyError('the central answered with an unexpected body');
    if (res.mode === 'changes' && Array.isArray(res.items) && res.items.length === 0 && res.rev === after) {
      // Nothing new. The central's checksum at the box's own rev says whether the two still agree.
      if (state.checksum !== null && res.checksum !== state.checksum)
        throw new ChecksumMismatch(`drift at rev ${after}: asking for a snapshot`);
      // The central answered and the two agree: an error recorded before is over (applying clears it too).
      if (state.lastError !== null) deps.clearError();
    } else {
      const applied = deps.apply(d.tenant, res);
      log.info({ mode: res.mode, from: after, rev: res.rev, ...applied }, 'catalogue from the central applied');
    }
    snapshot = false;
    if (res.release != null && !RELEASE_CHECKS.target.Check(res.release)) {
      log.warn('the central named a release in a shape this box does not know: ignored');
      deps.offer?.(null);
      knownRollout = 'none';
    } else {
      deps.offer?.(res.release);
      // An older central names no release at all (undefined): nothing to tell it then.
      knownRollout = res.release === undefined ? undefined : (res.release?.rollout ?? 'none');
    }
    return 0;
  }

  const loop = createCentralLoop({
    options,
    loadDevice: () => loadDevice(deps.dataDir),
    step,
    retryable: (err) => err instanceof CatalogueApplyError,
    failed(err, delay) {
      if (err instanceof ChecksumMismatch) snapshot = true;
      const message = (err as Error).message;
      try {
        deps.setError(message);
      } catch (dbErr) {
        log.error({ err: dbErr }, 'recording a catalogue error failed');
      }
      const applying = err instanceof CatalogueApplyError;
      log[applying ? 'error' : 'warn'](
        { err: message, status: (err as CentralError).status, retryInMs: delay },
        applying
          ? 'a catalogue change set from the central was not applied; serving the last good catalogue'
          : 'catalogue poll failed; retrying',
      );
    },
  });

  return {
    run: loop.run,
    stop: loop.stop,
  };
}
