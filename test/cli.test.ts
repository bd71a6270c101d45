import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { EXIT_CODES } from '../src/shared/errors.js';
import { DEMO, startTestBox } from './support/box.js';
import { type CliRun, expectOneLineFailure, runCli } from './support/cli.js';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
const tmp = (): string => mkdtempSync(join(tmpdir(), 'vb-cli-'));

const cli = (...args: string[]): CliRun => runCli(args, 15_000);

function configFile(text: string): string {
  const file = join(tmp(), 'venue-box.json');
  writeFileSync(file, text);
  return file;
}

describe('venue-box CLI', () => {
  test('--version and -v print the package version', () => {
    for (const flag of ['--version', '-v']) {
      const r = cli(flag);
      expect(r).toMatchObject({ status: 0, stdout: `${pkg.version} (Node ${process.versions.node})\n`, stderr: '' });
    }
  });

  test('--help lists serve and every serve option', () => {
    const r = cli('--help');
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`venue-box ${pkg.version}`);
    expect(r.stdout).toMatch(/venue-box serve /);
    for (const option of ['--host', '--port', '--data-dir', '--config', '--demo', '--help', '--version']) {
      expect(r.stdout).toContain(option);
    }
    expect(cli('-h').stdout).toBe(r.stdout);
  });

  test('an unknown command fails with a one-line message', () => {
    expectOneLineFailure(cli('frobnicate'), /unknown command: frobnicate/, 64);
    expectOneLineFailure(cli('serve', 'now'), /unknown command: serve now/, 64);
  });

  test('no command, and an unknown option, fail with a one-line message', () => {
    expectOneLineFailure(cli(), /no command/, 64);
    expectOneLineFailure(cli('serve', '--bogus'), /--bogus/, 64);
    expectOneLineFailure(cli('serve', '--port', 'eighty'), /--port .*eighty/, 64);
  });

  test('a port already in use: exit 69 with one line naming the port', async () => {
    const box = await startTestBox();
    try {
      const r = cli('serve', '--port', String(box.port), '--host', '127.0.0.1', '--data-dir', tmp());
      expectOneLineFailure(r, new RegExp(`\\b${box.port}\\b`), 69);
      expect(r.stderr).toMatch(/in use/);
      // The first box is untouched.
      expect((await box.get('/venue-api/api/nearest?lat=50&lng=20', (await box.token()).access_token)).status).toBe(
        200,
      );
    } finally {
      await box.stop();
    }
  });

  test.each([
    ['under /proc (Linux refuses the mkdir)', () => '/proc/venue-box-data'],
    ['under a regular file', () => join(configFile('not a directory'), 'data')],
    ['a regular file', () => configFile('not a directory')],
  ])('a data directory %s: exit 73 with one line naming it', (_name, dir) => {
    const path = dir();
    expectOneLineFailure(cli('serve', '--port', '0', '--data-dir', path), new RegExp(`data directory .*${path}`), 73);
  });

  test('a config file with invalid JSON: exit 78, one line naming the file and the line', () => {
    const file = configFile('{\n  "port": 8080,,\n}\n');
    expectOneLineFailure(cli('serve', '--data-dir', tmp(), '--config', file), new RegExp(`${file}.*line 2`), 78);
  });

  test('a config file that is not an object: exit 78, one line', () => {
    const file = configFile('[1, 2]');
    expectOneLineFailure(cli('serve', '--data-dir', tmp(), '--config', file), new RegExp(`${file}.*object`), 78);
  });

  test('a missing config file: exit 78, one line naming it', () => {
    const file = join(tmp(), 'nope.json');
    expectOneLineFailure(cli('serve', '--data-dir', tmp(), '--config', file), new RegExp(`${file}.*ENOENT`), 78);
  });

  test.each([
    ['an unknown option', '{"bogus": 1}', /bogus.*(unexpected|unknown)/i],
    ['an unknown nested option', '{"auth": {"accessTokenTtl": 5}}', /auth\/accessTokenTtl.*(unexpected|unknown)/i],
    ['a wrong type', '{"auth": {"accessTokenTtlSeconds": "60"}}', /auth\/accessTokenTtlSeconds.*integer/i],
    ['a port as a string', '{"port": "8080"}', /port.*integer/i],
    ['an out-of-range value', '{"http": {"maxBodyBytes": 10}}', /http\/maxBodyBytes.*1024/],
  ])('a config file with %s: exit 78, one line naming the file and the option', (_name, text, pattern) => {
    const file = configFile(text);
    // No --port on the command line: a bad port in the file must be reported, not overridden.
    const r = cli('serve', '--host', '127.0.0.1', '--data-dir', tmp(), '--config', file);
    expectOneLineFailure(r, pattern, 78);
    expect(r.stderr).toContain(file);
  });

  test('a restart on the same data dir with --demo keeps the data and does not duplicate it', async () => {
    const dataDir = tmp();
    const first = await startTestBox({ dataDir });
    const anon = await first.token();
    const staff = await first.token(DEMO.staff.username, DEMO.staff.password);
    expect(await first.stop()).toBe(0);

    const second = await startTestBox({ dataDir });
    try {
      const provisioned = second.logs
        .map((l) => JSON.parse(l) as { msg?: string; result?: string })
        .filter((l) => l.msg === 'provisioning checked');
      expect(provisioned).toMatchObject([{ result: 'unchanged' }]);
      // The signing key survived: tokens from before the restart still verify.
      const res = await second.get('/venue-api/api/nearest?lat=50.06&lng=19.94', anon.access_token);
      expect(res.status).toBe(200);
      expect(((await res.json()) as unknown[]).length).toBe(3);
      expect((await second.get('/venue-api/api/nearest?lat=50&lng=20', staff.access_token)).status).toBe(200);
      // So do the refresh tokens, and users keep their ids.
      const renewed = await fetch(second.url('/auth-oauth2/oauth/token'), {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-tenant': DEMO.tenant,
          authorization: `Basic ${Buffer.from(`${DEMO.client.clientId}:${DEMO.client.clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: anon.refresh_token }).toString(),
      });
      expect(renewed.status).toBe(200);
      expect(((await renewed.json()) as { UUID: string }).UUID).toBe(anon.UUID);
      expect((await second.token(DEMO.staff.username, DEMO.staff.password)).UUID).toBe(staff.UUID);
    } finally {
      await second.stop();
    }
  });

  test('SIGTERM stops the box cleanly: exit 0 and a "venue-box stopped" log line', async () => {
    const box = await startTestBox();
    expect(await box.stop('SIGTERM')).toBe(0);
    const entries = box.logs.map((l) => JSON.parse(l) as { msg?: string; signal?: string; level?: string });
    expect(entries).toContainEqual(expect.objectContaining({ msg: 'stopping', signal: 'SIGTERM' }));
    expect(entries.at(-1)).toMatchObject({ msg: 'venue-box stopped' });
    expect(entries.filter((e) => e.level === 'error' || e.level === 'fatal')).toEqual([]);
  });

  test('SIGINT stops it cleanly too', async () => {
    const box = await startTestBox();
    expect(await box.stop('SIGINT')).toBe(0);
    expect(box.logs.some((l) => (JSON.parse(l) as { msg?: string }).msg === 'venue-box stopped')).toBe(true);
  });

  test('every log line is one JSON object, and the listening line names the real address', async () => {
    const box = await startTestBox();
    await box.stop();
    for (const line of box.logs) expect(() => JSON.parse(line) as unknown).not.toThrow();
    const entries = box.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const listening = entries.find((l) => l.msg === 'venue-box listening');
    expect(listening).toMatchObject({ port: box.port, address: `http://127.0.0.1:${box.port}` });
  });

  test('a data directory under /proc does not hang the start (regression: recursive mkdir spins)', async () => {
    const proc = spawn(process.execPath, ['dist/main.cjs', 'serve', '--port', '0', '--data-dir', '/proc/vb/data']);
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        proc.kill('SIGKILL');
        resolve(-1);
      }, 10_000);
      proc.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(code).toBe(73);
  });
});

describe('exit codes (docs/operations.md "Exit codes"): each kind of error exits with its code and one line', () => {
  /** A data directory whose database is at a schema version no venue-box has yet. */
  const newerDatabase = (): string => {
    const dir = tmp();
    const db = new Database(join(dir, 'venue-box.db'));
    db.pragma('user_version = 9999');
    db.close();
    return dir;
  };

  test('a database newer than the program: 65, not 70 with a stack trace', () => {
    const dir = newerDatabase();
    expectOneLineFailure(
      cli('serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dir),
      /schema version 9999 is newer/,
      65,
    );
    expectOneLineFailure(cli('stock', 'check', '--data-dir', dir), /schema version 9999 is newer/, 65);
  });

  test('the systemd unit does not restart what waiting does not heal (64, 65, 78), and retries the rest', () => {
    const unit = readFileSync('native-config/venue-box.service', 'utf8');
    const prevented = /^RestartPreventExitStatus=(.*)$/m.exec(unit)?.[1]?.trim().split(/\s+/).map(Number);
    const { usage, data, config, unavailable, cantCreate, tempFail, software } = EXIT_CODES;
    expect(prevented?.sort()).toEqual([usage.code, data.code, config.code].sort());
    for (const healing of [unavailable, cantCreate, tempFail, software]) expect(prevented).not.toContain(healing.code);
  });

  test('no input: 66', () => {
    expectOneLineFailure(cli('stock', 'check', '--data-dir', tmp()), /no database at/, 66);
    expectOneLineFailure(cli('backup', 'verify', join(tmp(), 'nope.backup')), /cannot read .*ENOENT/, 66);
  });

  test('a data directory another box holds: 75, retried by systemd', async () => {
    const box = await startTestBox();
    try {
      expectOneLineFailure(
        cli('serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', box.dataDir),
        /a venue-box is running/,
        75,
      );
    } finally {
      await box.stop();
    }
  });

  test('an invalid provisioning file: 65', () => {
    const file = configFile(JSON.stringify({ provisioningFile: configFile('{"tenants": 5}') }));
    expectOneLineFailure(
      cli('serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', tmp(), '--config', file),
      /provisioning/,
      65,
    );
  });

  test('sync and central share the front end: one usage line naming their --help, exit 64', () => {
    for (const [program, args] of [
      ['venue-box sync', ['sync', 'frobnicate']],
      ['venue-box central', ['central', 'frobnicate']],
    ] as const) {
      const r = cli(...args);
      expectOneLineFailure(r, /unknown command: \w+ frobnicate/, 64, program);
      expect(r.stderr).toContain(`(run '${program} --help' for usage)`);
    }
    expectOneLineFailure(
      cli('sync', 'enrol', '--data-dir', tmp()),
      /enrol needs --central URL and --code CODE/,
      64,
      'venue-box sync',
    );
    expectOneLineFailure(cli('sync', 'status', '--bogus'), /--bogus/, 64, 'venue-box sync');
    expectOneLineFailure(cli('central', 'enrol'), /enrol needs --tenant and --venue/, 64, 'venue-box central');
    expectOneLineFailure(
      cli('central', 'serve', '--port', 'x'),
      /--port must be a port number/,
      64,
      'venue-box central',
    );
    expect(cli('sync', '--help')).toMatchObject({
      status: 0,
      stderr: '',
      stdout: expect.stringContaining('venue-box sync enrol'),
    });
    expect(cli('central', '-h')).toMatchObject({
      status: 0,
      stderr: '',
      stdout: expect.stringContaining('venue-box central serve'),
    });
  });
});
