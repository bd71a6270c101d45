import { execFile, spawnSync } from 'node:child_process';
import { expect } from 'vitest';

/** What a run of the bundled CLI left: its exit status (null when killed), signal and output. */
export interface CliRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/main.cjs ARGS` to completion; a hang is a failure (killed at `timeoutMs`), not a stuck test. */
export function runCli(args: string[], timeoutMs = 60_000): CliRun {
  const r = spawnSync(process.execPath, ['dist/main.cjs', ...args], { encoding: 'utf8', timeout: timeoutMs });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The same without blocking this process, for commands that talk to something the test serves meanwhile (a
 * fake printer, a central): `code` is the exit status, -1 when the process was killed.
 */
export function runCliAsync(
  args: string[],
  timeoutMs = 30_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['dist/main.cjs', ...args], { timeout: timeoutMs }, (err, stdout, stderr) => {
      const code = err ? (err as { code?: unknown }).code : 0;
      resolve({ code: typeof code === 'number' ? code : -1, stdout, stderr });
    });
  });
}

/**
 * An operator's error: exit `status` (docs/operations.md "Exit codes"), not a signal, and nothing on stderr but
 * one line, `<program>: ...` matching `pattern`, with no stack trace.
 */
export function expectOneLineFailure(r: CliRun, pattern: RegExp, status: number, program = 'venue-box'): void {
  expect({ status: r.status, signal: r.signal, stderr: r.stderr }).toMatchObject({ status, signal: null });
  expect(r.stderr.endsWith('\n')).toBe(true);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]!.startsWith(`${program}: `)).toBe(true);
  expect(lines[0]).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at |\.ts:\d|\.c?js:\d/);
}
