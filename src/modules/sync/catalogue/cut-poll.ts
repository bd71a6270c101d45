import { CentralError } from '../client.js';

/** The shortest wait a box asks for: a proxy that cuts sooner gets ordinary retries with backoff. */
export const MIN_WAIT_SECONDS = 5;
/** How much sooner than the cut the next polls end: the answer must be back before the proxy's timeout fires. */
const MARGIN_SECONDS = 5;

/**
 * Whether a long poll that failed after `elapsedMs` was cut by something between the box and the central (a load
 * balancer's or proxy's idle timeout: docs/sync.md "Running it") rather than refused by the central: no answer
 * at all, or a gateway's 502/504 without the central's error body, after waiting a while but before the central
 * would have answered. Then the wait to ask for from now on (shorter than the cut, at least MIN_WAIT_SECONDS);
 * undefined when it was not such a cut or the wait cannot shrink.
 */
export function waitAfterCut(err: unknown, elapsedMs: number, waitSeconds: number): number | undefined {
  if (!(err instanceof CentralError)) return undefined;
  const gateway = (err.status === 502 || err.status === 504) && !Array.isArray(err.body?.codes);
  const dropped = err.status === 0 && !/\((stopping|timeout)\)/.test(err.message);
  if (!gateway && !dropped) return undefined;
  if (elapsedMs < MIN_WAIT_SECONDS * 1000 || elapsedMs > waitSeconds * 1000 + 1000) return undefined;
  const shorter = Math.max(MIN_WAIT_SECONDS, Math.min(waitSeconds - 1, Math.floor(elapsedMs / 1000) - MARGIN_SECONDS));
  return shorter < waitSeconds ? shorter : undefined;
}
