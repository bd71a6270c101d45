import { performance } from 'node:perf_hooks';
import type { Logger } from '../../log.js';
import { loadDevice } from '../sync/enrolment/device.js';
import { type LeaseAnswer, requestStandbyLease } from '../sync/standby-lease.js';

/** How often a primary with a standby renews its lease at the central, and how long it waits for an answer. */
const RENEW_MS = 1500;
const REQUEST_TIMEOUT_MS = 1500;

export type Ask = typeof requestStandbyLease;

/**
 * The central as the witness of a pair (docs/architecture.md "A standby box", docs/sync.md "The standby lease").
 * A primary renews its lease every RENEW_MS; a standby claims the next term before it takes over, and the
 * central grants it only once the primary's lease has run out. The lease is counted from before each request
 * was sent, on this box's monotonic clock, so this box never believes in a lease the central has let go, and the
 * boxes' clocks may differ by hours.
 */
export function createWitness(o: {
  dataDir: string;
  boxId: () => string;
  term: () => number;
  /** Whether this box has a standby now (it may be paired while it runs): only then is there a lease to hold. */
  paired: () => boolean;
  log: Logger;
  /** A refusal naming a higher term: another box is the primary now. */
  onFenced(term: number, message: string): void;
  ask?: Ask;
}) {
  const ask = o.ask ?? requestStandbyLease;
  /** Until when (performance.now()) the lease holds; 0: none. */
  let leaseUntil = 0;
  /** What the last renewal found: no central to ask (not enrolled), the central, or no answer. */
  let last: 'none' | 'granted' | 'refused' | 'unreachable' = 'none';
  let timer: NodeJS.Timeout | undefined;

  async function renew(): Promise<void> {
    const device = o.paired() ? loadDevice(o.dataDir) : undefined;
    if (!device) {
      last = 'none';
      return;
    }
    const sentAt = performance.now();
    const answer = await ask(device, { holder: o.boxId(), term: o.term(), claim: false }, REQUEST_TIMEOUT_MS);
    if (answer.kind !== last) o.log.info({ answer }, `the standby lease at the central: ${answer.kind}`);
    last = answer.kind;
    if (answer.kind === 'granted') leaseUntil = sentAt + answer.ttlMs;
    if (answer.kind === 'refused' && answer.term !== null && answer.term > o.term()) {
      o.onFenced(answer.term, `the central's lease is at term ${answer.term}: another box took over`);
    }
    // A refusal without a term (the device unknown or revoked at the central): no witness to go by.
    if (answer.kind === 'refused' && answer.term === null) last = 'none';
  }

  return {
    start(): void {
      const tick = (): void => {
        void renew()
          .catch((err: unknown) => o.log.warn({ err }, 'renewing the standby lease failed'))
          .finally(() => {
            timer = setTimeout(tick, RENEW_MS);
            timer.unref();
          });
      };
      tick();
    },
    stop(): void {
      clearTimeout(timer);
    },
    /**
     * Whether the primary may confirm what its standby does not hold: while its lease holds, or when there is no
     * witness to ask (not enrolled, or the central unreachable: the documented gap), never once refused.
     */
    mayConfirmAlone(): boolean {
      if (last === 'none' || last === 'unreachable') return true;
      return last === 'granted' && performance.now() < leaseUntil;
    },
    /** 'held', 'lapsed', 'none' (no witness) or 'unreachable': for the status. */
    describe(): string {
      if (last === 'granted') return performance.now() < leaseUntil ? 'held' : 'lapsed';
      return last;
    },
  };
}
export type Witness = ReturnType<typeof createWitness>;

/**
 * The standby's claim before it takes over at `term` (its primary's + 1): true to go ahead. Granted, or no
 * witness to ask (not enrolled, unknown at the central, unreachable: the documented gap); a refusal naming a live
 * lease means the primary is alive and reaches the central: no takeover.
 */
export async function claimTakeover(o: {
  dataDir: string;
  boxId: string;
  term: number;
  log: Logger;
  ask?: Ask;
}): Promise<{ go: true; answer: LeaseAnswer | null } | { go: false; message: string }> {
  const device = loadDevice(o.dataDir);
  if (!device) return { go: true, answer: null };
  const answer = await (o.ask ?? requestStandbyLease)(
    device,
    { holder: o.boxId, term: o.term, claim: true },
    REQUEST_TIMEOUT_MS * 2,
  );
  if (answer.kind === 'refused' && answer.term !== null) {
    return {
      go: false,
      message: `the central says box ${answer.holder} holds the lease of term ${answer.term}: the primary is alive`,
    };
  }
  if (answer.kind !== 'granted') o.log.warn({ answer }, 'taking over without the central as witness');
  return { go: true, answer };
}
