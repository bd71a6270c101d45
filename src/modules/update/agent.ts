import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import { ReleaseRefused, readManifest, refusalFor, verifyRelease } from '../../shared/release.js';
import {
  RELEASE_CHECKS,
  type ReleaseManifest,
  type ReleaseTarget,
  type UpdateReport,
} from '../../shared/release-schemas.js';
import type { Service } from '../../shared/runtime.js';
import { loadDevice } from '../sync/enrolment/device.js';
import { digestOf } from '../../shared/files.js';
import { verifyBinary } from './download.js';
import { type DownloadContext, downloadRelease, pruneDownloads } from './fetch.js';
import { binaryOf, pruneReleases, runningManifest, runsFromLayout } from './layout.js';
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
  size: number;
  /** The signed release's signature: what a failure is kept by. */
  key: string;
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

/** The release to work on, and whether it came from a stick (never from anything the central says). */
interface Named {
  target: ReleaseTarget;
  local: boolean;
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
  const applyFile = join(dataDir, UPDATE_DIR, APPLY_FILE);
  let status = readStatus(dataDir, deps.now());
  /** undefined until the central answered once since the start; null: it names no release. */
  let offered: ReleaseTarget | null | undefined;
  let ownSha: string | undefined;
  let wake: (() => void) | undefined;
  let stopped = false;
  const abort = new AbortController();
  let superseded: AbortController | undefined;
  let progressWrittenMs = 0;
  /** The signature of the last release refused for its signature (reported once). */
  let lastForgery: string | undefined;
  /** The signature of the release in DIR/releases that this process checked last (hashing 100 MB is not free). */
  let verified: string | undefined;
  let requestInstall!: (plan: InstallPlan) => void;
  const installRequested = new Promise<InstallPlan>((r) => (requestInstall = r));

  const trustedKeys = () => status.releaseKeys ?? options.releaseKeys;

  function set(next: Partial<UpdateStatus>): void {
    const changedState = next.state !== undefined && next.state !== status.state;
    status = { ...status, ...next, since: changedState ? deps.now() : status.since };
    writeStatus(dataDir, status);
    if (changedState) deps.changed();
  }

  /** The release this process runs was just installed: it came up, so the install is done (before the port opens). */
  function confirmInstall(): void {
    const journal = readJournal(dataDir);
    if (!journal || journal.to !== program.version || journal.phase === 'trial') return;
    writeJournal(dataDir, undefined);
    const installed = runningManifest(options.dir, program.version);
    set({
      // A forced rollback: what was signed before it (the release rolled back from) is not taken again.
      ...(installed?.rollback ? { signedAfter: installed.createdAt } : {}),
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
    rmSync(applyFile, { force: true });
    pruneDownloads(options.dir, undefined);
    const removed = pruneReleases(options.dir, [program.version, journal.from]);
    log.info({ from: journal.from, to: program.version, removed }, 'update installed and healthy');
  }

  /** A release from a stick wins over the central's until it is installed, refused or rolled back. */
  function named(): Named | null | undefined {
    if (existsSync(applyFile)) {
      let target: unknown;
      try {
        target = JSON.parse(readFileSync(applyFile, 'utf8'));
      } catch {
        target = undefined;
      }
      if (RELEASE_CHECKS.target.Check(target) && !status.refused[target.release.signature]) {
        return { target, local: true };
      }
      rmSync(applyFile, { force: true });
    }
    return offered ? { target: offered, local: false } : offered;
  }

  function fail(n: Named, manifest: ReleaseManifest, err: ReleaseRefused): false {
    const version = manifest.version;
    log.warn({ version, rollout: n.target.rollout, reason: err.reason, err: err.message }, 'update refused');
    const failed = { version, sha256: manifest.sha256, key: n.target.release.signature, rollout: n.target.rollout };
    status = markFailed(status, failed, 'refused', err.reason, err.message, deps.now());
    writeStatus(dataDir, status);
    if (n.local) rmSync(applyFile, { force: true });
    deps.changed();
    return false;
  }

  /** Verifies, downloads and waits for the window; true when the install is to begin. */
  async function step(): Promise<boolean> {
    const n = named();
    // Not heard from the central yet since the start: what the status says stands.
    if (n === undefined) return false;
    if (n === null) {
      if (['downloading', 'verified', 'waiting'].includes(status.state)) {
        set({ state: 'idle', target: undefined, progress: undefined, detail: 'the rollout no longer names this box' });
      }
      return false;
    }
    const { target: t } = n;
    const key = t.release.signature;
    if (status.refused[key]) return false;
    let manifest: ReleaseManifest;
    let keys: string[];
    try {
      ({ manifest, trusted: keys } = verifyRelease(t.release, trustedKeys()));
    } catch (err) {
      if (!(err instanceof ReleaseRefused)) throw err;
      // Reported, but not kept among the refused: anyone can make such files, and they must not crowd out the
      // releases this box really refused or rolled back. The same one again is not reported again.
      if (lastForgery === key) return false;
      lastForgery = key;
      const claimed = readManifest(t.release.manifest)?.version;
      log.warn({ version: claimed, rollout: t.rollout, err: err.message }, 'update refused: its signature');
      if (n.local) rmSync(applyFile, { force: true });
      set({
        state: 'refused',
        target: claimed,
        rollout: t.rollout,
        reason: err.reason,
        detail: err.message,
        progress: undefined,
      });
      return false;
    }
    if (manifest.version === program.version) {
      if (n.local) rmSync(applyFile, { force: true });
      if (status.state !== 'healthy' || status.target !== program.version) {
        set({ state: 'healthy', target: program.version, rollout: t.rollout, reason: undefined, detail: undefined });
      }
      return false;
    }
    const refusal = refusalFor(manifest, {
      ...program,
      databaseSchema: deps.repo.schema(),
      signedAt: runningManifest(options.dir, program.version)?.createdAt,
      signedAfter: status.signedAfter,
    });
    if (refusal) return fail(n, manifest, refusal);
    if (verified !== key && !(await installedAlready(manifest, t))) {
      const downloaded = await downloadRelease(downloads, t, manifest);
      if (downloaded instanceof ReleaseRefused) return fail(n, manifest, downloaded);
      if (downloaded === 'later') return false;
      verified = key;
    }
    // Named no more while it downloaded (a newer rollout, or none): the next step takes what is named now.
    if (named()?.target.release.signature !== key) return false;
    const waitFor = status.installAfterMs ?? 0;
    const why =
      waitFor > deps.now()
        ? `the backup before the last install failed; tried again at ${new Date(waitFor).toISOString()}`
        : notNow(
            n.local ? 'now' : t.window,
            {
              ms: deps.now(),
              localMinutes: deps.localMinutes(deps.now()),
              venuesClosed: deps.venuesClosed(deps.now()),
            },
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
      size: manifest.size,
      key,
      rollout: t.rollout,
      releaseKeys: keys,
    });
    return true;
  }

  /** The release is in DIR/releases already (downloaded before a restart, or the previous one of a rollback). */
  async function installedAlready(manifest: ReleaseManifest, t: ReleaseTarget): Promise<boolean> {
    if (!existsSync(binaryOf(options.dir, manifest.version))) return false;
    try {
      await verifyBinary(binaryOf(options.dir, manifest.version), manifest);
    } catch {
      return false;
    }
    verified = t.release.signature;
    if (status.state === 'downloading' || status.sha256 !== manifest.sha256) {
      set({
        state: 'verified',
        target: manifest.version,
        sha256: manifest.sha256,
        rollout: t.rollout,
        progress: undefined,
        detail: undefined,
        reason: undefined,
      });
    }
    return true;
  }

  const downloads: DownloadContext = {
    dir: options.dir,
    log,
    now: deps.now,
    options,
    program,
    ownSha: async () => (ownSha ??= (await digestOf(program.execPath)).sha256),
    device: () => loadDevice(dataDir),
    downloadSignal() {
      // A new target (a newer rollout) ends this download: the box goes for the latest, not each in between.
      superseded = new AbortController();
      return AbortSignal.any([abort.signal, superseded.signal]);
    },
    superseded: () => superseded?.signal.aborted === true && !abort.signal.aborted,
    status: () => status,
    set,
    progress(bytes, total) {
      status = { ...status, progress: { bytes, total } };
      // On the disk for `update status` too, about once a second: an SD card need not see every range.
      if (deps.now() - progressWrittenMs >= 1000 || bytes === total) {
        progressWrittenMs = deps.now();
        writeStatus(dataDir, status);
      }
    },
    notBefore: new Map(),
  };

  const service: Service = {
    async run() {
      if (!enabled) {
        log.info(
          { dir: options.dir },
          'updates are off: this box does not run from a release directory (docs/operations.md "Updating boxes")',
        );
      } else {
        confirmInstall();
        if (trustedKeys().length === 0)
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
      const before = JSON.stringify(offered ?? null);
      offered = next ?? null;
      if (JSON.stringify(offered) === before) return;
      superseded?.abort();
      wake?.();
    },
    report: (): UpdateReport => reportOf(status, program),
  };
}
export type UpdateAgent = ReturnType<typeof createUpdateAgent>;

const sameKeys = (a: string[], b: string[]) => a.length === b.length && a.every((k) => b.includes(k));
