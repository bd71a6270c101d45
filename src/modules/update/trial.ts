import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { get } from 'node:http';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { Config } from '../../config.js';
import { DB_FILE } from '../../db/open.js';
import { betterSqliteOptions } from '../../native/addons.js';
import type { Logger } from '../../log.js';
import type { UpdateReason } from '../../shared/release.js';
import { backupTarget } from '../backup/cli.js';
import { restoreBackup } from '../backup/restore.js';
import { takeBackup } from '../backup/take.js';
import type { InstallPlan, Program } from './agent.js';
import { binaryOf, linkedVersion, pointLink } from './layout.js';
import { type InstallJournal, markFailed, readStatus, writeJournal, writeStatus } from './state.js';

/** Set in the environment of a release under trial: it serves on loopback only and runs no background loops. */
export const TRIAL_ENV = 'VENUE_BOX_UPDATE_TRIAL';

export interface GateOptions {
  /** The new release must answer /readyz 200 within this long (migrations included). */
  readySeconds: number;
  /** ...and then keep answering it, every second, for this long. */
  probationSeconds: number;
}

export interface InstallDeps {
  config: Config;
  dir: string;
  plan: InstallPlan;
  program: Program;
  log: Logger;
  now(): number;
  gate: GateOptions;
  /** `serve`'s own options to pass on (--config, --demo); host and port are the trial's. */
  serveArgs: string[];
}

type Verdict = { ok: true } | { ok: false; reason: UpdateReason; detail: string };

/** The database's schema version (PRAGMA user_version), 0 without a database. */
export function databaseSchema(dataDir: string): number {
  const file = join(dataDir, DB_FILE);
  if (!existsSync(file)) return 0;
  const db = new Database(file, { ...betterSqliteOptions(), readonly: true, fileMustExist: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

/**
 * Puts a release back after an install that did not finish: when the new release moved the database to a
 * schema the old one cannot open, the backup taken before it started is restored (the new release took no
 * command: it ran on loopback, or was never confirmed). Otherwise the database stays as it is.
 */
export function restoreForOldRelease(dataDir: string, journal: InstallJournal, log: Logger): void {
  const schema = databaseSchema(dataDir);
  if (schema === journal.schemaBefore) return;
  if (!journal.backup)
    throw new Error(`the database is at schema ${schema} and no backup was taken before the install`);
  const result = restoreBackup(journal.backup, dataDir);
  log.warn(
    { schema, schemaBefore: journal.schemaBefore, backup: journal.backup, replacedDir: result.replacedDir },
    'the new release had migrated the database: the backup taken before the install is restored',
  );
}

/**
 * The install, run by the old release after it stopped serving (docs/operations.md "Updating boxes"): a backup,
 * the journal, then the new release started on loopback and watched through its health gate. Passed: the links
 * are swapped and the process exits for systemd to start `current`. Failed: the new release is stopped, the data
 * put back if it must be, the reason recorded for the hello, and the process exits for the old one to start again.
 */
export async function installAfterStop(deps: InstallDeps): Promise<void> {
  const { config, dir, plan, log } = deps;
  const dataDir = resolve(config.dataDir);
  const fail = (reason: UpdateReason, detail: string) => {
    const failed = { version: plan.to, sha256: plan.sha256, rollout: plan.rollout };
    const status = markFailed(readStatus(dataDir, deps.now()), failed, 'rolledBack', reason, detail, deps.now());
    writeStatus(dataDir, status);
    log.error({ from: plan.from, to: plan.to, reason, detail }, 'update rolled back');
  };
  let backup: string;
  try {
    backup = (await takeBackup(backupTarget(config))).file;
  } catch (err) {
    return fail('gate', `the backup before the install failed: ${(err as Error).message}`);
  }
  const journal: InstallJournal = {
    phase: 'trial',
    from: plan.from,
    to: plan.to,
    sha256: plan.sha256,
    ...(plan.rollout ? { rollout: plan.rollout } : {}),
    backup,
    schemaBefore: databaseSchema(dataDir),
    fromSchema: deps.program.schema,
    starts: 0,
    startedMs: deps.now(),
    releaseKeys: plan.releaseKeys,
  };
  writeJournal(dataDir, journal);
  log.info({ from: plan.from, to: plan.to, backup }, 'update: the new release starts on loopback for its health gate');
  const verdict = await runTrial(binaryOf(dir, plan.to), deps);
  if (!verdict.ok) {
    restoreForOldRelease(dataDir, journal, log);
    writeJournal(dataDir, undefined);
    return fail(verdict.reason, verdict.detail);
  }
  writeJournal(dataDir, { ...journal, phase: 'switching' });
  if (linkedVersion(dir, 'current') !== undefined) pointLink(dir, 'previous', plan.from);
  pointLink(dir, 'current', plan.to);
  writeJournal(dataDir, { ...journal, phase: 'switched' });
  log.info({ from: plan.from, to: plan.to }, 'update passed its health gate; current names it: restarting into it');
}

/** The new release's first start and its health gate. */
async function runTrial(binary: string, deps: InstallDeps): Promise<Verdict> {
  const { gate, log } = deps;
  const env: NodeJS.ProcessEnv = { ...process.env, [TRIAL_ENV]: '1' };
  // The old process speaks to systemd (its watchdog is still fed); the trial must not.
  delete env.NOTIFY_SOCKET;
  delete env.WATCHDOG_USEC;
  delete env.WATCHDOG_PID;
  const child = spawn(binary, [...deps.serveArgs, '--host', '127.0.0.1', '--port', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let port: number | undefined;
  const lastErrors: string[] = [];
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<void>((r) =>
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      r();
    }),
  );
  child.on('error', (err) => {
    exited = { code: null, signal: null };
    lastErrors.push(err.message);
  });
  const watch = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream) =>
    createInterface({ input: stream }).on('line', (line) => {
      out.write(`${line}\n`);
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number; level?: number };
        if (entry.msg === 'venue-box listening' && typeof entry.port === 'number') port = entry.port;
        if ((entry.level ?? 0) >= 50) lastErrors.push(entry.msg ?? line);
      } catch {
        // Not a log line: an error's message on stderr (its stack's frames are left out).
        if (line.trim() !== '' && !/^\s+at /.test(line)) lastErrors.push(line);
      }
      if (lastErrors.length > 3) lastErrors.shift();
    });
  watch(child.stdout!, process.stdout);
  watch(child.stderr!, process.stderr);
  const why = () =>
    `${exited?.signal ? `killed by ${exited.signal}` : `exit code ${exited?.code}`}${lastErrors.length ? `: ${lastErrors.join(' / ')}` : ''}`;

  try {
    const readyBy = Date.now() + gate.readySeconds * 1000;
    while (!(port !== undefined && (await readyz(port, 2000)))) {
      if (exited) return { ok: false, reason: 'exited', detail: `the new release stopped at start (${why()})` };
      if (Date.now() > readyBy)
        return { ok: false, reason: 'notReady', detail: `not ready within ${gate.readySeconds} s` };
      await sleep(250);
    }
    log.info({ port, probationSeconds: gate.probationSeconds }, 'update: the new release is ready; watching it');
    const until = Date.now() + gate.probationSeconds * 1000;
    while (Date.now() < until) {
      await sleep(1000);
      if (exited)
        return { ok: false, reason: 'crashLoop', detail: `the new release stopped after it was ready (${why()})` };
      // A /readyz that takes this long means an event loop that does not turn: systemd's watchdog would kill it.
      if (!(await readyz(port, 5000))) {
        if (exited)
          return { ok: false, reason: 'crashLoop', detail: `the new release stopped after it was ready (${why()})` };
        return {
          ok: false,
          reason: 'gate',
          detail: 'the new release stopped answering /readyz (the watchdog would not be fed)',
        };
      }
    }
    return { ok: true };
  } finally {
    await stopChild(child, exit, () => exited !== undefined);
  }
}

async function stopChild(child: ChildProcess, exit: Promise<void>, gone: () => boolean): Promise<void> {
  if (gone()) return;
  child.kill('SIGTERM');
  await Promise.race([exit, sleep(15_000)]);
  if (gone()) return;
  child.kill('SIGKILL');
  await exit;
}

/** True when GET /readyz answers 200 within `timeoutMs`. */
function readyz(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/readyz', timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}
