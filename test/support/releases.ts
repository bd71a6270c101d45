import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import nacl from 'tweetnacl';
import { type KeyRotation, type ReleaseManifest, type SignedRelease, signManifest } from '../../src/shared/release.js';
import { MIGRATIONS } from '../../src/db/migrate.js';
import { sha256OfFile } from '../../src/modules/update/download.js';

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
  const { size } = await import('node:fs').then((fs) => fs.statSync(built.binary));
  const manifest: ReleaseManifest = {
    format: 1,
    version: built.version,
    arch: process.arch as 'x64',
    sha256: await sha256OfFile(built.binary),
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
