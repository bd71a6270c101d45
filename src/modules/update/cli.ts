import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isSea } from 'node:sea';
import pkg from '../../../package.json';
import type { Program } from '../../command-line.js';
import { type Config, loadConfigFile, resolveConfig } from '../../config.js';
import { createLogger } from '../../log.js';
import { nowMs } from '../../shared/clock.js';
import { ProcessError, usageError } from '../../shared/errors.js';
import { fsyncPath } from '../../shared/files.js';
import { ReleaseRefused, refusalFor, verifyRelease } from '../../shared/release.js';
import { RELEASE_PATHS, type ReleaseTarget } from '../../shared/release-schemas.js';
import { ownerFor } from '../backup/restore.js';
import { APPLY_FILE } from './agent.js';
import { verifyBinary } from './download.js';
import { downloadsDir, installRelease, installedVersions, linkedVersion, pointLink, runsFromLayout } from './layout.js';
import { guardStart } from './recover.js';
import { readJournal, readStatus, updateDir, writeJsonDurably } from './state.js';
import { runningManifest } from './layout.js';
import { databaseSchema } from './trial.js';

const USAGE = `Usage:
  venue-box update status [--data-dir DIR] [--config FILE] [--json]
  venue-box update apply FILE.release.json [--binary FILE] [--data-dir DIR] [--config FILE]
  venue-box update init [--config FILE]
  venue-box update guard [--data-dir DIR] [--config FILE]
`;

const OPTIONS = {
  'data-dir': { type: 'string' },
  config: { type: 'string' },
  binary: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `venue-box update ...` (docs/operations.md "Updating boxes"), run by the one front end (src/command-line.ts). */
export const UPDATE: Program<typeof OPTIONS> = {
  name: 'venue-box update',
  help: USAGE,
  options: OPTIONS,
  commands: [
    { words: ['status'], run: (values) => status(configOf(values), values.json === true) },
    {
      words: ['apply'],
      args: 1,
      run: (values, [file]) => apply(configOf(values), resolve(file!), values.binary),
    },
    { words: ['init'], run: (values) => init(configOf(values)) },
    { words: ['guard'], run: (values) => guard(configOf(values)) },
  ],
};

function configOf(values: { 'data-dir'?: string; config?: string }): Config {
  const file = values.config ? (loadConfigFile(values.config) as Record<string, unknown>) : {};
  return resolveConfig(values['data-dir'] !== undefined ? { ...file, dataDir: values['data-dir'] } : file);
}

const out = (text: string) => process.stdout.write(text);

/** What runs, what is installed, and the state of the last update. */
function status(config: Config, json: boolean): number {
  const dataDir = resolve(config.dataDir);
  const dir = config.update.dir;
  const s = readStatus(dataDir, nowMs());
  const journal = readJournal(dataDir);
  const view = {
    version: pkg.version,
    node: process.versions.node,
    arch: process.arch,
    dir,
    managed: runsFromLayout(dir, process.execPath, pkg.version),
    current: linkedVersion(dir, 'current') ?? null,
    previous: linkedVersion(dir, 'previous') ?? null,
    installed: installedVersions(dir),
    releaseKeys: s.releaseKeys ?? config.update.releaseKeys,
    state: s.state,
    target: s.target ?? null,
    rollout: s.rollout ?? null,
    progress: s.progress ?? null,
    reason: s.reason ?? null,
    detail: s.detail ?? null,
    since: new Date(s.since).toISOString(),
    installing: journal
      ? {
          phase: journal.phase,
          from: journal.from,
          to: journal.to,
          starts: journal.starts,
          since: new Date(journal.startedMs).toISOString(),
        }
      : null,
  };
  if (json) {
    out(`${JSON.stringify(view, null, 2)}\n`);
    return 0;
  }
  out(`program    venue-box ${view.version} (Node ${view.node}, ${view.arch})\n`);
  out(
    `releases   ${dir}: current ${view.current ?? '-'}, previous ${view.previous ?? '-'}; installed ${view.installed.join(', ') || '-'}\n`,
  );
  if (!view.managed)
    out(`           this program does not run from ${dir}: updates are off ('venue-box update init')\n`);
  if (view.releaseKeys.length === 0)
    out('           no release key is trusted (update.releaseKeys): updates are off\n');
  const progress = view.progress ? ` ${view.progress.bytes} of ${view.progress.total} bytes` : '';
  out(
    `update     ${view.state}${view.target ? ` ${view.target}` : ''}${progress}${view.rollout ? ` (rollout ${view.rollout})` : ''} since ${view.since}\n`,
  );
  if (view.reason || view.detail) out(`           ${[view.reason, view.detail].filter(Boolean).join(': ')}\n`);
  if (view.installing) {
    const i = view.installing;
    out(`installing ${i.from} -> ${i.to}: ${i.phase} since ${i.since}\n`);
  }
  return 0;
}

/**
 * A release from a stick, for a box without internet: the same checks as a download (the box's release keys,
 * size, sha256, architecture, version, schema), then handed to the running box, which installs it as soon as no
 * order is open, with the same health gate and way back.
 */
async function apply(config: Config, file: string, binaryArg: string | undefined): Promise<number> {
  const dataDir = resolve(config.dataDir);
  const dir = config.update.dir;
  if (!existsSync(file)) throw new ProcessError('noInput', `no release file at ${file}`);
  const binary = resolve(binaryArg ?? file.replace(/\.release\.json$/, ''));
  if (binary === file || !existsSync(binary))
    throw new ProcessError('noInput', `no binary at ${binary} (give it with --binary FILE)`);
  const keys = readStatus(dataDir, nowMs()).releaseKeys ?? config.update.releaseKeys;
  if (keys.length === 0)
    throw new ProcessError('config', 'no release key is trusted (update.releaseKeys in the configuration)');
  let signed: unknown;
  try {
    signed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new ProcessError('data', `${file} is not a release file (JSON from 'venue-box release sign')`);
  }
  try {
    const { manifest } = verifyRelease(signed, keys);
    // The same rules as the running box's (src/modules/update/agent.ts), so what is taken here is installed there.
    const refusal = refusalFor(manifest, {
      version: pkg.version,
      arch: process.arch,
      databaseSchema: existsSync(dataDir) ? databaseSchema(dataDir) : 0,
      signedAt: runningManifest(dir, pkg.version)?.createdAt,
      signedAfter: readStatus(dataDir, nowMs()).signedAfter,
    });
    if (refusal) throw refusal;
    await verifyBinary(binary, manifest);
    // The binary goes where a download would land, verified: the box finds it there and installs it.
    mkdirSync(downloadsDir(dir), { recursive: true, mode: 0o750 });
    const landing = join(downloadsDir(dir), `${manifest.sha256}.bin`);
    copyFileSync(binary, `${landing}.tmp`);
    fsyncPath(`${landing}.tmp`);
    renameSync(`${landing}.tmp`, landing);
    fsyncPath(downloadsDir(dir), true);
    // Run as root (sudo), what it wrote must still be the box's: the service runs as its own user.
    const chown = ownerFor(dataDir);
    for (const path of [updateDir(dataDir), downloadsDir(dir), landing]) chown?.(path);
    const target: ReleaseTarget = {
      // From a stick: the box knows it by the file it came in (apply.json), never by these fields.
      rollout: 'stick',
      release: signed as ReleaseTarget['release'],
      url: RELEASE_PATHS.binary(manifest.sha256),
      patches: [],
      window: 'closed',
    };
    writeJsonDurably(join(updateDir(dataDir), APPLY_FILE), target);
    chown?.(join(updateDir(dataDir), APPLY_FILE));
    out(
      `${manifest.version} (${manifest.arch}) verified: the box installs it as soon as no order is open; follow it with 'venue-box update status'\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof ReleaseRefused) throw new ProcessError('refused', `refused (${err.reason}): ${err.message}`);
    throw err;
  }
}

/** Makes the release directory from the running binary (a box flashed before it had one). */
function init(config: Config): number {
  const dir = config.update.dir;
  if (!isSea()) {
    throw usageError('update init runs from the single binary (dist/venue-box), not from node');
  }
  if (runsFromLayout(dir, process.execPath, pkg.version) && linkedVersion(dir, 'current') === pkg.version) {
    out(`${dir} holds ${pkg.version} already, and current names it\n`);
    return 0;
  }
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const bin = installRelease(dir, pkg.version, process.execPath, undefined, false);
  pointLink(dir, 'current', pkg.version);
  out(`${bin}\n${join(dir, 'current')} -> releases/${pkg.version}\n`);
  return 0;
}

/** ExecStartPre of the unit: never fails the start. */
function guard(config: Config): number {
  const log = createLogger(config.logLevel);
  try {
    out(`${guardStart(resolve(config.dataDir), config.update.dir, config.update.maxStarts, log)}\n`);
  } catch (err) {
    log.error({ err }, 'update guard failed; starting current as it is');
  }
  return 0;
}
