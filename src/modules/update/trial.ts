import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { get } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { Config } from '../../config.js';
import { DB_FILE } from '../../db/open.js';
import { betterSqliteOptions } from '../../native/addons.js';
import type { Logger } from '../../log.js';
import type { ReleaseRefused } from '../../shared/release.js';
import type { UpdateReason } from '../../shared/release-schemas.js';
import { backupTarget } from '../backup/cli.js';
import { restoreBackup } from '../backup/restore.js';
import { takeBackup } from '../backup/take.js';
import type { InstallPlan, Program } from './agent.js';
import { verifyBinary } from './download.js';
import { binaryOf, linkedVersion, pointLink } from './layout.js';
import { type InstallJournal, markFailed, readStatus, writeJournal, writeStatus } from './state.js';

/** After a backup before an install failed, the next try waits this long. */
const BACKUP_RETRY_MS = 3_600_000;

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
  const fail = (state: 'rolledBack' | 'refused', reason: UpdateReason, detail: string) => {
    const failed = { version: plan.to, sha256: plan.sha256, key: plan.key, rollout: plan.rollout };
    const status = markFailed(readStatus(dataDir, deps.now()), failed, state, reason, detail, deps.now());
    writeStatus(dataDir, status);
    log.error(
      { from: plan.from, to: plan.to, reason, detail },
      `update ${state === 'refused' ? 'refused' : 'rolled back'}`,
    );
  };
  // The binary again, just before it runs: it may have lain on the disk (an SD card) for days since its download.
  try {
    await verifyBinary(binaryOf(dir, plan.to), plan);
  } catch (err) {
    return fail('refused', (err as ReleaseRefused).reason ?? 'hash', (err as Error).message);
  }
  let backup: string;
  try {
    backup = (await takeBackup(backupTarget(config))).file;
  } catch (err) {
    // Not the release's fault (a backup stick that is out, a full disk): tried again in the next window.
    const status = readStatus(dataDir, deps.now());
    const detail = `the backup before the install failed (${(err as Error).message}); tried again in an hour`;
    // Not at once: the process exits now and systemd starts it again within seconds, in the same window.
    const installAfterMs = deps.now() + BACKUP_RETRY_MS;
    writeStatus(dataDir, { ...status, state: 'verified', detail, installAfterMs, since: deps.now() });
    log.error({ err: (err as Error).message }, 'update: the backup before the install failed; not installed now');
    return;
  }
  const journal: InstallJournal = {
    phase: 'trial',
    from: plan.from,
    to: plan.to,
    sha256: plan.sha256,
    key: plan.key,
    ...(plan.rollout ? { rollout: plan.rollout } : {}),
    backup,
    schemaBefore: databaseSchema(dataDir),
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
    return fail('rolledBack', verdict.reason, verdict.detail);
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
  // The port is chosen here, not read from the release's log (which a quieter logLevel leaves out).
  const port = await freeLoopbackPort();
  // Its stdin is a pipe from this process: when this process dies (kill -9), the trial sees it end and stops too.
  const child = spawn(binary, [...deps.serveArgs, '--host', '127.0.0.1', '--port', String(port)], {
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
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
        const entry = JSON.parse(line) as { msg?: string; level?: number };
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
    while (!(await readyz(port, 2000))) {
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

/** A port free on 127.0.0.1 now (the kernel's pick, released at once for the release under trial). */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
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
