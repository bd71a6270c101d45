import type { Logger } from '../../log.js';
import { AppError } from '../../shared/errors.js';
import type { FollowerStatus } from './follower.js';
import type { claimTakeover } from './witness.js';

/** How often a takeover asked for and not yet granted claims the lease again. */
const RETRY_MS = 1000;

export interface TakeoverDeps {
  log: Logger;
  /** How long the primary must have been silent (standby.primarySilentMs). */
  silentMs: number;
  follower: { status(): FollowerStatus };
  /** The claim at the central for the next term (src/modules/standby/witness.ts). */
  claim(): ReturnType<typeof claimTakeover>;
  /** Granted: stop following and become the primary. */
  promote(): Promise<void>;
}

/**
 * A takeover asked for by keepalived's notify_master (docs/operations.md "A standby box"). keepalived asks once,
 * when the standby takes the floating address, so the request stands until it is granted or moot: the standby
 * claims the next term at the central every second while its primary stays silent. The central refuses while the
 * primary's lease lives (the primary may be alive and only cut off from this box); a primary that died lets it
 * run out within its TTL, and the next claim wins. Hearing the primary again withdraws the request.
 */
export function createTakeover(d: TakeoverDeps) {
  let wanted = false;
  let lastRefusal: string | undefined;
  let witness: string | undefined;
  let done: Promise<void> | undefined;

  const silent = (f: FollowerStatus): boolean => f.primarySilentMs === null || f.primarySilentMs >= d.silentMs;

  async function loop(): Promise<void> {
    while (wanted) {
      if (!silent(d.follower.status())) {
        wanted = false;
        d.log.info('the primary speaks again: the takeover asked for is withdrawn');
        return;
      }
      const takeover = await d.claim();
      witness = takeover.go ? (takeover.answer?.kind ?? 'none') : 'refused';
      if (takeover.go) {
        await d.promote();
        return;
      }
      if (takeover.message !== lastRefusal) d.log.warn(`takeover waits: ${takeover.message}`);
      lastRefusal = takeover.message;
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }

  return {
    /**
     * Asks for the takeover: refused at once without a copy, or while the primary speaks (after waiting up to the
     * silence it needs and a second); otherwise it stands, and `done` resolves once promoted.
     */
    async request(): Promise<{ done: Promise<void> }> {
      const deadline = Date.now() + d.silentMs + 1000;
      for (;;) {
        const f = d.follower.status();
        if (f.position === null) throw AppError.of('conflict', 'this standby has no copy of the primary yet');
        if (silent(f)) break;
        if (Date.now() >= deadline)
          throw AppError.of('conflict', `the primary spoke ${f.primarySilentMs} ms ago: it is alive, no takeover`);
        await new Promise((r) => setTimeout(r, 100));
      }
      if (!wanted) {
        wanted = true;
        done = loop().catch((err: unknown) => {
          wanted = false;
          d.log.error({ err }, 'the takeover failed');
          throw err;
        });
      }
      return { done: done! };
    },
    pending: (): boolean => wanted,
    /** Why the takeover waits (the central's refusal), and what the last claim found. */
    waitingFor: (): string | undefined => (wanted ? lastRefusal : undefined),
    witness: (): string | undefined => witness,
    stop(): void {
      wanted = false;
    },
  };
}
