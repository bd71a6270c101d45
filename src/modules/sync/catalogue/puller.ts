import type { Logger } from '../../../log.js';
import type { CatalogueResponse } from '../../../shared/catalogue-protocol.js';
import { CatalogueApplyError, ChecksumMismatch } from './apply.js';
import type { CatalogueState } from './repo.js';
import { CentralError, centralClient } from '../client.js';
import { type Device, loadDevice } from '../enrolment/device.js';
import { deviceSigner } from '../enrolment/signer.js';

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
}

/**
 * The catalogue puller (docs/sync.md "Down: the catalogue"), beside the sender: one long poll in flight, asking for
 * the changes after the box's cursor. A change set that cannot be applied leaves the box on its last good
 * catalogue and is asked for again after a jittered, doubling delay; a checksum that differs asks for a snapshot.
 */
export function createPuller(deps: PullerDeps) {
  const { log, options } = deps;
  const abort = new AbortController();
  let stopped = false;
  let running: Promise<void> | undefined;
  let wakeSleep: (() => void) | undefined;

  const sleep = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    wakeSleep = () => {
      clearTimeout(timer);
      resolve();
    };
  });

  async function loop(): Promise<void> {
    let attempt = 0;
    let snapshot = false;
    let device: Device | undefined;
    while (!stopped) {
      device ??= loadDevice(deps.dataDir);
      if (!device) {
        await sleep(options.enrolPollMs);
        continue;
      }
      const d = device;
      try {
        const state = deps.state();
        // A box of another tenant before (a data dir moved between boxes) starts from a snapshot.
        const after = state.tenantId === d.tenant ? state.rev : 0;
        const res = await centralClient.catalogue(d, deviceSigner(d.secretKey),
          { after, waitS: options.waitSeconds, snapshot },
          { requestTimeoutMs: options.requestTimeoutMs + options.waitSeconds * 1000, signal: abort.signal });
        if (res.mode === 'changes' && res.items.length === 0 && res.rev === after) {
          // Nothing new. The central's checksum at the box's own rev says whether the two still agree.
          if (state.checksum !== null && res.checksum !== state.checksum) throw new ChecksumMismatch(`drift at rev ${after}: asking for a snapshot`);
        } else {
          const applied = deps.apply(d.tenant, res);
          log.info({ mode: res.mode, from: after, rev: res.rev, ...applied }, 'catalogue from the central applied');
        }
        snapshot = false;
        attempt = 0;
      } catch (err) {
        if (stopped) break;
        if (err instanceof ChecksumMismatch) snapshot = true;
        attempt++;
        const delay = retryDelay(err, attempt);
        const message = (err as Error).message;
        try {
          deps.setError(message);
        } catch (dbErr) {
          log.error({ err: dbErr }, 'recording a catalogue error failed');
        }
        const applying = err instanceof CatalogueApplyError;
        log[applying ? 'error' : 'warn']({ err: message, status: (err as CentralError).status, retryInMs: delay },
          applying ? 'a catalogue change set from the central was not applied; serving the last good catalogue' : 'catalogue poll failed; retrying');
        await sleep(delay);
      }
    }
  }

  function retryDelay(err: unknown, attempt: number): number {
    if (err instanceof CentralError && err.retryAfterS !== undefined && (err.status === 429 || err.status === 503)) {
      return Math.min(options.retryMaxMs, Math.max(options.retryMinMs, err.retryAfterS * 1000));
    }
    if (err instanceof CentralError && [401, 403, 426].includes(err.status)) return options.retryMaxMs;
    const cap = Math.min(options.retryMaxMs, options.retryMinMs * 2 ** Math.min(attempt - 1, 30));
    return Math.max(options.retryMinMs / 4, Math.random() * cap);
  }

  return {
    start(): void {
      running ??= loop().catch((err: unknown) => log.error({ err }, 'catalogue puller stopped'));
    },
    async stop(): Promise<void> {
      stopped = true;
      abort.abort();
      wakeSleep?.();
      await running;
    },
  };
}
