import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Config } from '../../config.js';
import { ProcessError } from '../../shared/errors.js';
import { loadStandbyState, STANDBY_FILE, type StandbyState } from './state.js';
import { StandbyStatus } from './status.js';

const checkStatus = TypeCompiler.Compile(StandbyStatus);

/** Loopback addresses, the only ones `venue-box standby promote` may come from (keepalived runs on the box). */
export const LOOPBACK = new Set(['127.0.0.1', '::1', '0000:0000:0000:0000:0000:0000:0000:0001', '::ffff:127.0.0.1']);

/** Where the command line finds this machine's box: its configured host and port, and its data directory. */
export type LocalBox = Pick<Config, 'host' | 'port'> & { dataDir: string };

/**
 * A call to the running box on this machine, at its configured port. An unreachable box is a ProcessError
 * `unavailable` (exit 69, docs/operations.md "Exit codes").
 */
export async function callLocalBox(
  box: Pick<Config, 'host' | 'port'>,
  path: string,
  method: string,
  timeoutMs: number,
): Promise<Response> {
  const host = box.host === '0.0.0.0' || box.host === '::' ? '127.0.0.1' : box.host;
  try {
    return await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${box.port}${path}`, {
      method,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new ProcessError('unavailable', `no venue-box answers on port ${box.port}: ${(err as Error).message}`);
  }
}

/**
 * This box's standby status (docs/operations.md "A standby box"), for the command line: the running box's own
 * when it answers, else what the data directory's state file says (state 'stopped'). The answer counts only if
 * it comes from the box of this data directory: another box may hold the configured port (a second data
 * directory on the same machine, a test), and its status would be taken for this one's.
 */
export async function localStandbyStatus(box: LocalBox): Promise<StandbyStatus> {
  const file = existsSync(join(box.dataDir, STANDBY_FILE)) ? loadStandbyState(box.dataDir) : undefined;
  try {
    const res = await callLocalBox(box, '/standby-api/status', 'GET', 2000);
    const body = res.ok ? ((await res.json()) as unknown) : undefined;
    // A box never paired may keep no state file (its id is then new at each start), or one written by `standby
    // code` after it started: while unpaired, any single box's answer is taken for its own.
    if (checkStatus.Check(body) && (body.boxId === file?.boxId || (body.role === 'single' && !file?.peer))) return body;
  } catch {
    // not running: what the state file says
  }
  return stoppedStatus(file ?? loadStandbyState(box.dataDir));
}

/** The status of a box that is not running, from its state file. */
export function stoppedStatus(s: StandbyState): StandbyStatus {
  return {
    role: s.peer ? s.role : 'single',
    boxId: s.boxId,
    term: s.term,
    peer: s.peer ? { boxId: s.peer.boxId, url: s.peer.url } : null,
    state: 'stopped',
    connected: false,
    lagBytes: 0,
    lagSeconds: 0,
    replicatedBytes: 0,
    stalls: 0,
    lastTakeoverAt: s.lastTakeoverAt,
    primarySilentMs: null,
    refusal: null,
  };
}
