import { CentralError } from '../client.js';

/** The shortest wait a box asks for: a proxy that cuts sooner gets ordinary retries with backoff. */
export const MIN_WAIT_SECONDS = 5;
/** How much sooner than the cut the next polls end: the answer must be back before the proxy's timeout fires. */
const MARGIN_SECONDS = 5;
/** Two cuts this close in time are one proxy's idle timeout, not chance. */
const SAME_CUT_MS = 2000;
/** After this long on a shorter wait, the configured one is tried again (the proxy may have changed). */
export const RETRY_CONFIGURED_MS = 3_600_000;

/**
 * Whether a long poll that failed after `elapsedMs` looks cut by something between the box and the central (a
 * load balancer's or proxy's idle timeout: docs/sync.md "Several central processes") rather than refused by the
 * central: a gateway's 502/504 without the central's error body, or the connection reset, after waiting at least
 * MIN_WAIT_SECONDS but no longer than the central would have held it.
 */
export function looksCut(err: unknown, elapsedMs: number, waitSeconds: number): boolean {
  if (!(err instanceof CentralError)) return false;
  const gateway = (err.status === 502 || err.status === 504) && !Array.isArray(err.body?.codes);
  const dropped = err.status === 0 && /ECONNRESET|EPIPE|socket hang up|other side closed/.test(err.message);
  return (gateway || dropped) && elapsedMs >= MIN_WAIT_SECONDS * 1000 && elapsedMs <= waitSeconds * 1000 + 1000;
}

/**
 * The wait a box's catalogue polls ask for. A crash, a restart or a network blip can look like a cut once; a
 * proxy's idle timeout cuts every poll at the same moment. So a first cut is an ordinary failure, and a second
 * one within SAME_CUT_MS of the first sets the wait MARGIN_SECONDS under it (MIN_WAIT_SECONDS at least); an
 * hour later the configured wait is tried again.
 */
export function createPollWait(configured: number, now: () => number = Date.now) {
  let wait = configured;
  let shortenedAt = 0;
  let suspect: number | undefined;
  return {
    /** The wait for the next poll. */
    seconds(): number {
      if (wait < configured && now() - shortenedAt >= RETRY_CONFIGURED_MS) wait = configured;
      return wait;
    },
    /** A poll answered: a cut before it was chance. */
    answered(): void {
      suspect = undefined;
    },
    /**
     * A poll failed after `elapsedMs`: the new, shorter wait when this is the second cut at the same moment (the
     * caller polls again at once, with no error); undefined otherwise (an ordinary failure).
     */
    failed(err: unknown, elapsedMs: number): number | undefined {
      if (!looksCut(err, elapsedMs, wait)) {
        suspect = undefined;
        return undefined;
      }
      const again = suspect !== undefined && Math.abs(elapsedMs - suspect) <= SAME_CUT_MS;
      suspect = elapsedMs;
      const shorter = Math.max(MIN_WAIT_SECONDS, Math.min(wait - 1, Math.floor(elapsedMs / 1000) - MARGIN_SECONDS));
      if (!again || shorter >= wait) return undefined;
      suspect = undefined;
      wait = shorter;
      shortenedAt = now();
      return wait;
    },
  };
}
