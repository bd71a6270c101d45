import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import { freeBytesOf } from '../../shared/files.js';
import {
  RELEASE_CHECKS,
  type ReleaseManifest,
  ReleaseRefused,
  type ReleaseTarget,
  refusalFor,
  type UpdateReport,
  verifyRelease,
} from '../../shared/release.js';
import type { Service } from '../../shared/runtime.js';
import { CentralError } from '../sync/client.js';
import { loadDevice } from '../sync/enrolment/device.js';
import { type Obtained, obtainRelease, sha256OfFile, verifyBinary } from './download.js';
import { binaryOf, installedVersions, installRelease, linkedVersion, pruneReleases, runsFromLayout } from './layout.js';
import type { UpdateRepo } from './repo.js';
import {
  markFailed,
  readJournal,
  readStatus,
  reportOf,
  UPDATE_DIR,
  type UpdateStatus,
  writeJournal,
  writeStatus,
} from './state.js';
import { notNow } from './window.js';

export interface UpdateOptions {
  dir: string;
  releaseKeys: string[];
  downloadBytesPerSecond: number;
  quietMinutes: number;
  checkSeconds: number;
  minFreeBytes: number;
  requestTimeoutMs: number;
}

export interface Program {
  version: string;
  arch: string;
  node: string;
  /** The newest database schema this program migrates to. */
  schema: number;
  execPath: string;
}

/** What the box hands over to the install once it has stopped (src/modules/update/trial.ts). */
export interface InstallPlan {
  from: string;
  to: string;
  sha256: string;
  rollout?: string;
  /** The release keys to keep once this release is confirmed (a rotation it carried). */
  releaseKeys: string[];
}

/** A release put on the box by `venue-box update apply` (a USB stick): installed as soon as no order is open. */
export const APPLY_FILE = 'apply.json';

export interface AgentDeps {
  dataDir: string;
  log: Logger;
  now(): number;
  options: UpdateOptions;
  program: Program;
  repo: UpdateRepo;
  /** True when every venue of the box is closed on every channel now (the catalogue's hours). */
  venuesClosed(ms: number): boolean;
  /** Minutes since midnight in the venues' time zone. */
  localMinutes(ms: number): number;
  /** The state changed: say hello soon, so headquarters sees it. */
  changed(): void;
}

/**
 * The box's update agent (docs/operations.md "Updating boxes"): takes the target the central names in the
 * catalogue's long poll (or a release applied from a stick), checks its signature with the box's own release
 * keys, downloads it in the background, and when the venue is in its window and quiet, asks the process to stop
 * and hand over to the install (`installRequested`). The central is never trusted for code: a target whose
 * signature does not verify is refused and reported.
 */
export function createUpdateAgent(deps: AgentDeps) {
  const { dataDir, log, options, program } = deps;
  const enabled = runsFromLayout(options.dir, program.execPath, program.version);
  let status = readStatus(dataDir, deps.now());
  let target: ReleaseTarget | null | undefined;
  let ownSha: string | undefined;
  let wake: (() => void) | undefined;
  let stopped = false;
  const abort = new AbortController();
  let requestInstall!: (plan: InstallPlan) => void;
  const installRequested = new Promise<InstallPlan>((r) => (requestInstall = r));

  const trustedKeys = () => status.releaseKeys ?? options.releaseKeys;
  let superseded: AbortController | undefined;
  let progressWrittenMs = 0;
  /** The sha256 of the release in DIR/releases that this process checked last (hashing 100 MB is not free). */
  let verified: string | undefined;

  /** The release is in DIR/releases already (downloaded before a restart, or the previous one of a rollback). */
  async function installedAlready(manifest: ReleaseManifest, rollout: string): Promise<boolean> {
    if (!existsSync(binaryOf(options.dir, manifest.version))) return false;
    try {
      await verifyBinary(binaryOf(options.dir, manifest.version), manifest);
    } catch {
      return false;
    }
    verified = manifest.sha256;
    if (status.state === 'downloading' || status.sha256 !== manifest.sha256) {
      set({
        state: 'verified',
        target: manifest.version,
        sha256: manifest.sha256,
        rollout,
        progress: undefined,
        detail: undefined,
        reason: undefined,
      });
    }
    return true;
  }

  function set(next: Partial<UpdateStatus>, announce = true): void {
    const changedState = next.state !== undefined && next.state !== status.state;
    status = { ...status, ...next, since: changedState ? deps.now() : status.since };
    writeStatus(dataDir, status);
    if (announce && changedState) deps.changed();
  }

  /** The release this process runs was just installed: it came up, so the install is done (before the port opens). */
  function confirmInstall(): void {
    const journal = readJournal(dataDir);
    if (!journal || journal.to !== program.version || journal.phase === 'trial') return;
    writeJournal(dataDir, undefined);
    set({
      state: 'healthy',
      target: program.version,
      sha256: journal.sha256,
      rollout: journal.rollout,
      reason: undefined,
      detail: `installed over ${journal.from}`,
      progress: undefined,
      // A rotation the release carried: from now on the box trusts the new key, not the configured one.
      releaseKeys: sameKeys(journal.releaseKeys, trustedKeys()) ? status.releaseKeys : journal.releaseKeys,
    });
    rmSync(join(dataDir, UPDATE_DIR, APPLY_FILE), { force: true });
    const removed = pruneReleases(options.dir, [program.version, journal.from]);
    log.info({ from: journal.from, to: program.version, removed }, 'update installed and healthy');
  }

  /** The target to work on: one applied from a stick wins over the central's. */
  function currentTarget(): ReleaseTarget | null | undefined {
    const file = join(dataDir, UPDATE_DIR, APPLY_FILE);
    if (existsSync(file)) {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as ReleaseTarget;
      } catch {
        rmSync(file, { force: true });
      }
    }
    return target;
  }

  async function step(): Promise<boolean> {
    const t = currentTarget();
    // Not heard from the central yet since the start: what the status says stands.
    if (t === undefined) return false;
    if (t === null) {
      if (['downloading', 'verified', 'waiting'].includes(status.state)) {
        set({ state: 'idle', target: undefined, progress: undefined, detail: 'the rollout no longer names this box' });
      }
      return false;
    }
    let manifest: ReleaseManifest;
    let keys: string[];
    try {
      ({ manifest, trusted: keys } = verifyRelease(t.release, trustedKeys()));
    } catch (err) {
      if (!(err instanceof ReleaseRefused)) throw err;
      // What the unverified manifest says, for the report only: headquarters sees which release was refused.
      const claimed = claimedRelease(t.release.manifest);
      // Kept by its signature, never by the sha256 it claims: a forgery naming a good release's hash must not
      // make the box refuse the good one.
      const id = `signature:${t.release.signature}`;
      if (status.refused[id]) return false;
      log.warn(
        { rollout: t.rollout, version: claimed?.version, err: err.message },
        'a release offered to this box is refused',
      );
      status = markFailed(
        status,
        { version: claimed?.version, sha256: id, rollout: t.rollout },
        'refused',
        err.reason,
        err.message,
        deps.now(),
      );
      writeStatus(dataDir, status);
      deps.changed();
      return false;
    }
    if (manifest.version === program.version) {
      if (status.state !== 'healthy' || status.target !== program.version) {
        set({ state: 'healthy', target: program.version, rollout: t.rollout, reason: undefined, detail: undefined });
      }
      return false;
    }
    const failed = status.refused[manifest.sha256];
    if (failed) return false;
    const refusal = refusalFor(manifest, { ...program, databaseSchema: deps.repo.schema() });
    if (refusal) return refuse(manifest, t, refusal);
    if (verified !== manifest.sha256 && !(await installedAlready(manifest, t.rollout))) {
      if (status.state !== 'downloading' || status.sha256 !== manifest.sha256) {
        set({
          state: 'downloading',
          target: manifest.version,
          sha256: manifest.sha256,
          rollout: t.rollout,
          reason: undefined,
          detail: undefined,
          progress: { bytes: 0, total: manifest.size },
        });
      }
      const device = loadDevice(dataDir);
      if (!device && t.rollout !== 'local') return false;
      ownSha ??= await sha256OfFile(program.execPath);
      let obtained: Obtained;
      // A new target (a newer rollout) ends this download: the box goes for the latest, not each in between.
      superseded = new AbortController();
      try {
        obtained = await obtainRelease(
          {
            device: device!,
            client: {
              requestTimeoutMs: options.requestTimeoutMs,
              signal: AbortSignal.any([abort.signal, superseded.signal]),
            },
            dir: options.dir,
            log,
            bytesPerSecond: options.downloadBytesPerSecond,
            reserve: (bytes) => {
              const free = freeBytesOf(options.dir);
              if (free - bytes < options.minFreeBytes) {
                throw new ReleaseRefused(
                  'disk',
                  `the disk has ${free} bytes free; the download needs ${bytes} and update.minFreeBytes ${options.minFreeBytes} stay free`,
                );
              }
            },
            progress: (bytes, total) => {
              status = { ...status, progress: { bytes, total } };
              // On the disk for `update status` too, about once a second: an SD card need not see every range.
              if (deps.now() - progressWrittenMs >= 1000 || bytes === total) {
                progressWrittenMs = deps.now();
                writeStatus(dataDir, status);
              }
            },
          },
          t,
          manifest,
          { binary: program.execPath, sha256: ownSha },
        );
      } catch (err) {
        if (err instanceof ReleaseRefused && err.reason === 'disk') {
          set({ detail: err.message, reason: 'disk' });
          log.warn({ err: err.message }, 'the update waits for disk space');
          return false;
        }
        if (err instanceof ReleaseRefused) return refuse(manifest, t, err);
        if (superseded.signal.aborted && !abort.signal.aborted) {
          log.info({ version: manifest.version }, 'update download left: the central names another release');
          return false;
        }
        if (err instanceof CentralError) {
          set({ detail: err.message.slice(0, 300) });
          log.warn({ err: err.message }, 'update download failed; retrying');
          return false;
        }
        throw err;
      }
      pruneReleases(options.dir, [program.version, linkedVersion(options.dir, 'previous')]);
      installRelease(options.dir, manifest.version, obtained.file, JSON.stringify(t.release), true);
      verified = manifest.sha256;
      set({ state: 'verified', progress: undefined, detail: undefined, reason: undefined });
      log.info(
        { version: manifest.version, rollout: t.rollout, fetchedBytes: obtained.fetched, patched: obtained.patched },
        'update downloaded and verified',
      );
    }
    // Named no more while it downloaded (a newer rollout, or none): the next step takes what is named now.
    if (currentTarget()?.release.signature !== t.release.signature) return false;
    const why = notNow(
      t.rollout === 'local' ? 'now' : t.window,
      { ms: deps.now(), localMinutes: deps.localMinutes(deps.now()), venuesClosed: deps.venuesClosed(deps.now()) },
      deps.repo.quiet(),
      options.quietMinutes,
    );
    if (why) {
      if (status.state !== 'waiting' || status.detail !== why) set({ state: 'waiting', detail: why });
      return false;
    }
    set({ state: 'installing', detail: `installing over ${program.version}` });
    log.info(
      { from: program.version, to: manifest.version, rollout: t.rollout },
      'installing an update: the box stops for it',
    );
    requestInstall({
      from: program.version,
      to: manifest.version,
      sha256: manifest.sha256,
      rollout: t.rollout,
      releaseKeys: keys,
    });
    return true;
  }

  function refuse(manifest: ReleaseManifest, t: ReleaseTarget, err: ReleaseRefused): false {
    log.warn({ version: manifest.version, rollout: t.rollout, reason: err.reason, err: err.message }, 'update refused');
    status = markFailed(
      status,
      { version: manifest.version, sha256: manifest.sha256, rollout: t.rollout },
      'refused',
      err.reason,
      err.message,
      deps.now(),
    );
    writeStatus(dataDir, status);
    deps.changed();
    return false;
  }

  const service: Service = {
    async run() {
      if (!enabled) {
        log.info(
          { dir: options.dir },
          'updates are off: this box does not run from a release directory (docs/operations.md "Updating boxes")',
        );
      } else {
        confirmInstall();
        if (options.releaseKeys.length === 0 && !status.releaseKeys)
          log.warn('updates are off: no update.releaseKeys configured (docs/operations.md "Updating boxes")');
      }
      while (!stopped) {
        if (enabled && trustedKeys().length > 0) {
          try {
            if (await step()) break;
          } catch (err) {
            if (stopped) break;
            throw err;
          }
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, options.checkSeconds * 1000);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
      await new Promise<void>((resolve) => {
        if (stopped) return resolve();
        wake = resolve;
      });
    },
    stop() {
      stopped = true;
      abort.abort();
      wake?.();
    },
  };

  return {
    service,
    installRequested,
    /** The central's answer to the catalogue poll: its `release` (undefined: a central without releases). */
    offer(next: ReleaseTarget | null | undefined): void {
      const before = JSON.stringify(target ?? null);
      target = next ?? null;
      if (JSON.stringify(target) === before) return;
      superseded?.abort();
      wake?.();
    },
    /** `update apply` put a release on the box. */
    poke: () => wake?.(),
    report: (): UpdateReport => reportOf(status, program),
    installed: () => installedVersions(options.dir),
  };
}
export type UpdateAgent = ReturnType<typeof createUpdateAgent>;

/** The version a manifest claims, without trusting it; undefined when it does not parse as one. */
function claimedRelease(text: string): { version: string } | undefined {
  try {
    const m = JSON.parse(text) as Partial<ReleaseManifest>;
    return RELEASE_CHECKS.manifest.Check(m) ? { version: m.version! } : undefined;
  } catch {
    return undefined;
  }
}

const sameKeys = (a: string[], b: string[]) => a.length === b.length && a.every((k) => b.includes(k));
