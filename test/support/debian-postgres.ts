import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePort } from './ports.js';

export const DEBIAN_PG_BIN = '/usr/lib/postgresql/15/bin';

export interface DebianPostgres {
  /** A superuser's URL of database `name` (default `postgres`). */
  url(name?: string): string;
  port: number;
  dir: string;
  /** pg_ctl stop -m fast: every connection is cut; the cluster's files stay. */
  stopServer(): Promise<void>;
  /** pg_ctl start again after stopServer. */
  startServer(): Promise<void>;
  stop(): void;
}

/**
 * A cluster of Debian's PostgreSQL 15 (the package postgresql-15), in a temp directory of its own, on a loopback
 * port, with password (scram) authentication over TCP as a real deployment has. Run as the `postgres` user when
 * the tests run as root (PostgreSQL refuses root). Never the package's own cluster or service.
 */
export async function startDebianPostgres(): Promise<DebianPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'vb-pg15-'));
  chmodSync(dir, 0o700);
  // PostgreSQL refuses to run as root: as root, the cluster is the package's `postgres` user's.
  const owner =
    userInfo().uid === 0
      ? { uid: Number(execFileSync('id', ['-u', 'postgres'])), gid: Number(execFileSync('id', ['-g', 'postgres'])) }
      : undefined;
  const argv = (bin: string, args: string[]): [string, string[]] =>
    owner ? ['runuser', ['-u', 'postgres', '--', join(DEBIAN_PG_BIN, bin), ...args]] : [join(DEBIAN_PG_BIN, bin), args];
  const run = (bin: string, args: string[]) => execFileSync(...argv(bin, args), { stdio: 'pipe' });
  // Under load the test's own clients must go on meanwhile: not blocking this process's event loop.
  const runAsync = (bin: string, args: string[]) => promisify(execFile)(...argv(bin, args)).then(() => undefined);
  const password = randomBytes(12).toString('hex');
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (owner) {
    chownSync(dir, owner.uid, owner.gid);
    chownSync(pwfile, owner.uid, owner.gid);
  }
  const data = join(dir, 'data');
  run('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    `--pwfile=${pwfile}`,
    '-E',
    'UTF8',
    '--locale=C.UTF-8',
  ]);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`;
  const ctlArgs = (args: string[]) => ['-D', data, '-l', join(dir, 'log'), '-w', '-o', options, ...args];
  const ctl = (...args: string[]) => run('pg_ctl', ctlArgs(args));
  ctl('start');
  return {
    port,
    dir,
    url: (name = 'postgres') => `postgres://postgres:${password}@127.0.0.1:${port}/${name}`,
    stopServer: () => runAsync('pg_ctl', ctlArgs(['-m', 'fast', 'stop'])),
    startServer: () => runAsync('pg_ctl', ctlArgs(['start'])),
    stop() {
      try {
        ctl('-m', 'fast', 'stop');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
