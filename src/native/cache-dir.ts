import { accessSync, constants, lstatSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessError } from '../shared/errors.js';

/**
 * Where the single binary writes its native addons at first start. The first usable candidate wins:
 *
 * 1. `$VENUE_BOX_CACHE`: an operator's explicit choice, so it must work (an error otherwise, no fallback);
 * 2. `$CACHE_DIRECTORY`: set by systemd for `CacheDirectory=venue-box` (the unit's /var/cache/venue-box);
 * 3. `$XDG_CACHE_HOME/venue-box`;
 * 4. `/var/cache/venue-box` when this user may create or write it;
 * 5. `<os.tmpdir()>/venue-box-<uid>`, private to this user (0700, owned by us): /tmp is shared, and a
 *    `.node` file someone else planted there would run as us.
 *
 * The directory must allow executable mappings: a `noexec` mount makes `process.dlopen` fail (the error
 * names the directory, and `VENUE_BOX_CACHE` picks another).
 */
export interface CacheDirInput {
  env: NodeJS.ProcessEnv;
  uid: number;
  tmp: string;
  /** The appliance's own cache directory (tests point it elsewhere). */
  system?: string;
}

/** No usable directory for the addons: the machine's setup, exit 78 (EX_CONFIG). */
export class CacheDirError extends ProcessError {
  constructor(message: string) {
    super('config', message);
  }
}

export function chooseCacheDir(input: CacheDirInput = { env: process.env, uid: uidOf(), tmp: tmpdir() }): string {
  const { env, uid, tmp, system = '/var/cache/venue-box' } = input;
  if (env.VENUE_BOX_CACHE) {
    const dir = env.VENUE_BOX_CACHE;
    if (!usable(dir)) throw new CacheDirError(`VENUE_BOX_CACHE=${dir} is not a writable directory`);
    return dir;
  }
  const shared = [
    // systemd may list several directories separated by ':'; the unit names one.
    env.CACHE_DIRECTORY?.split(':')[0],
    env.XDG_CACHE_HOME ? join(env.XDG_CACHE_HOME, 'venue-box') : undefined,
    system,
  ];
  for (const dir of shared) if (dir && usable(dir)) return dir;

  const own = join(tmp, `venue-box-${uid}`);
  try {
    mkdirSync(own, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new CacheDirError(`no writable cache directory for native addons (last tried ${own}: ${code(err)})`);
  }
  const st = lstatSync(own);
  if (!st.isDirectory() || (uid >= 0 && st.uid !== uid) || (st.mode & 0o077) !== 0) {
    throw new CacheDirError(`${own} is not a private directory of this user; set VENUE_BOX_CACHE`);
  }
  return own;
}

function usable(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function uidOf(): number {
  return typeof process.getuid === 'function' ? process.getuid() : -1;
}

function code(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}
