import { afterEach, describe, expect, test, vi } from 'vitest';
import { dispatch, exitWith, type Program, runProgram } from './command-line.js';
import { ProcessError } from './shared/errors.js';

const OPTIONS = { help: { type: 'boolean', short: 'h' }, dir: { type: 'string' } } as const;

function program(ran: string[]): Program<typeof OPTIONS> {
  return {
    name: 'venue-box thing',
    help: 'Usage: venue-box thing\n',
    options: OPTIONS,
    commands: [
      {
        words: ['a', 'b'],
        run(values) {
          ran.push(`a b ${values.dir ?? '-'}`);
          return 0;
        },
      },
      {
        words: ['c'],
        args: 1,
        run(_values, [x]) {
          ran.push(`c ${x}`);
          return 3;
        },
      },
    ],
  };
}

describe('the command-line front end', () => {
  const stderr: string[] = [];
  const stdout: string[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    stderr.length = 0;
    stdout.length = 0;
  });
  const capture = () => {
    vi.spyOn(process.stderr, 'write').mockImplementation((t) => stderr.push(String(t)) > 0);
    vi.spyOn(process.stdout, 'write').mockImplementation((t) => stdout.push(String(t)) > 0);
  };

  test('runs the command its words and argument count name, with the options', async () => {
    const ran: string[] = [];
    expect(await dispatch(program(ran), ['a', 'b', '--dir', 'x'])).toBe(0);
    expect(await dispatch(program(ran), ['c', 'y'])).toBe(3);
    expect(ran).toEqual(['a b x', 'c y']);
  });

  test('--help prints the help text, whatever else is given', async () => {
    capture();
    expect(await dispatch(program([]), ['frob', '-h'])).toBe(0);
    expect(stdout.join('')).toBe('Usage: venue-box thing\n');
  });

  test.each([
    [['a'], 'unknown command: thing a'],
    [['c'], 'unknown command: thing c'],
    [['c', 'y', 'z'], 'unknown command: thing c y z'],
    [[], 'no command given'],
    [['a', 'b', '--bogus'], "Unknown option '--bogus'"],
  ])('%j is a usage error: 64 and one line naming --help', async (argv, message) => {
    capture();
    expect(await runProgram('venue-box thing', () => dispatch(program([]), argv))).toBe(64);
    expect(stderr.join('')).toMatch(
      new RegExp(`^venue-box thing: ${message}.* \\(run 'venue-box thing --help' for usage\\)\\n$`),
    );
  });

  test("an operator's error is its code and one line; anything else is a bug, thrown on", async () => {
    capture();
    expect(await runProgram('venue-box', () => Promise.reject(new ProcessError('config', 'bad option')))).toBe(78);
    expect(stderr).toEqual(['venue-box: bad option\n']);
    await expect(runProgram('venue-box', () => Promise.reject(new TypeError('oops')))).rejects.toThrow(TypeError);
  });

  test('the process exits with the code; a bug exits 70 with its stack trace', async () => {
    capture();
    const exits: number[] = [];
    vi.spyOn(process, 'exit').mockImplementation(((code: number) => {
      exits.push(code);
    }) as typeof process.exit);
    exitWith('venue-box', Promise.resolve(78));
    exitWith('venue-box', Promise.reject(new TypeError('oops')));
    await new Promise((resolve) => setImmediate(resolve));
    expect(exits).toEqual([78, 70]);
    expect(stderr.join('')).toMatch(/^venue-box: unexpected error: TypeError: oops\n\s+at /);
  });
});
