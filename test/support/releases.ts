import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import nacl from 'tweetnacl';
import { signManifest } from '../../src/shared/release.js';
import type { KeyRotation, ReleaseManifest, SignedRelease } from '../../src/shared/release-schemas.js';
import { MIGRATIONS } from '../../src/db/migrate.js';
import { digestOf } from '../../src/shared/files.js';
import { CENTRAL_DEMO } from './central.js';
import { FAST_SYNC } from './sync.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SOURCES = ['src', 'scripts', 'web', 'native-config', 'build.sh', 'tsconfig.json', 'package-lock.json'];

export interface BuiltRelease {
  version: string;
  binary: string;
}

/**
 * A release built by build.sh from a copy of this checkout whose package.json names `version` (and whose sources
 * `edit` may change: a release that breaks in a chosen way). The copy shares node_modules; builds are kept in the
 * run's directory by version, so each test file builds each version once (about 5 s each here).
 */
export function buildRelease(version: string, edit?: (tree: string) => void, arch?: 'arm64'): BuiltRelease {
  const tree = join(tmpdir(), `vb-release-${version}${arch ? `-${arch}` : ''}`);
  const out = join(tree, 'dist', arch ? `venue-box-linux-${arch}` : 'venue-box');
  if (existsSync(out)) return { version, binary: out };
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(tree, { recursive: true });
  for (const name of SOURCES) cpSync(join(root, name), join(tree, name), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'));
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  writeFileSync(join(tree, 'package.json'), `${JSON.stringify({ ...pkg, version }, null, 2)}\n`);
  edit?.(tree);
  execFileSync('bash', ['build.sh', ...(arch ? ['--arch', arch] : [])], {
    cwd: tree,
    env: { ...process.env, SKIP_SMOKE: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 280_000,
  });
  return { version, binary: out };
}

/** Replaces `from` by `to` in a source file of a release tree (the edit must apply). */
export function editSource(tree: string, file: string, from: string, to: string): void {
  const path = join(tree, file);
  const text = readFileSync(path, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} has no ${JSON.stringify(from)}`);
  writeFileSync(path, text.replace(from, to));
}

export const releaseKeyPair = () => nacl.sign.keyPair();

/** The signed release file of a built binary, as `venue-box release sign` writes it. */
export async function signRelease(
  built: BuiltRelease,
  secretKey: Uint8Array,
  extra: Partial<ReleaseManifest> = {},
  rotations: KeyRotation[] = [],
): Promise<SignedRelease> {
  const { sha256, size } = await digestOf(built.binary);
  const manifest: ReleaseManifest = {
    format: 1,
    version: built.version,
    arch: process.arch as 'x64',
    sha256,
    size,
    node: process.versions.node,
    schema: { box: MIGRATIONS[MIGRATIONS.length - 1]!.version },
    notes: '',
    createdAt: new Date().toISOString(),
    rollback: false,
    ...extra,
  };
  return signManifest(manifest, secretKey, rotations);
}

/** A box installed as releases (`update init`), its files in a directory of its own. */
export interface ReleaseBox {
  opt: string;
  dataDir: string;
  config: string;
  /** Runs the base release's binary (under the emulator for another architecture). */
  run(args: string[]): void;
}

/**
 * Makes a box that runs `base` from a release directory, trusting `releaseKey`, with the demo's catalogue, on
 * 127.0.0.2 (127.0.0.1 is where a release under trial listens: src/modules/update/trial.ts), and enrolled at
 * `central` for `venue` when given. `update` adds to the update options (quick checks here).
 */
export async function prepareReleaseBox(options: {
  name: string;
  base: BuiltRelease;
  releaseKey: string;
  update?: Record<string, unknown>;
  central?: { url(path: string): string; enrolCode(venue: string): Promise<string> };
  venue?: string;
  emulator?: { command: string; env: NodeJS.ProcessEnv };
}): Promise<ReleaseBox> {
  const dir = mkdtempSync(join(tmpdir(), `vb-${options.name}-`));
  const box = { opt: join(dir, 'opt'), dataDir: join(dir, 'data'), config: join(dir, 'venue-box.json') };
  mkdirSync(box.dataDir);
  writeFileSync(
    box.config,
    JSON.stringify({
      host: '127.0.0.2',
      port: 0,
      dataDir: box.dataDir,
      provisioningFile: join(root, 'native-config/demo.json'),
      backup: { enabled: false },
      ...FAST_SYNC,
      sync: { ...FAST_SYNC.sync, catalogueWaitSeconds: 5 },
      update: { dir: box.opt, releaseKeys: [options.releaseKey], checkSeconds: 0.5, ...options.update },
    }),
  );
  const env = { ...process.env, ...options.emulator?.env, VENUE_BOX_CACHE: join(dir, 'cache') };
  const run = (args: string[]) => {
    const [command, argv] = options.emulator
      ? [options.emulator.command, [options.base.binary, ...args]]
      : [options.base.binary, args];
    execFileSync(command, argv, { env, stdio: 'pipe' });
  };
  run(['update', 'init', '--config', box.config]);
  if (options.central) {
    const code = await options.central.enrolCode(options.venue ?? CENTRAL_DEMO.venues[0]!);
    run(['sync', 'enrol', '--central', options.central.url(''), '--code', code, '--config', box.config]);
  }
  return { ...box, run };
}
