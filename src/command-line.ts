import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT_CODES, ProcessError, usageError } from './shared/errors.js';

/*
 * The one command-line front end of `venue-box`, `venue-box sync` and `venue-box central`: one parser, one
 * table of commands each, one usage-error path and one mapping of errors to exit codes (docs/operations.md
 * "Exit codes").
 */

type Options = NonNullable<ParseArgsConfig['options']>;

/** The option values of a command line with these options, as node:util's parseArgs types them. */
export type Values<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true }>
>['values'];

export interface Command<O extends Options> {
  /** The words naming the command (`['stock', 'check']`); the positional arguments follow them. */
  words: string[];
  /** How many positional arguments it takes after its words (default 0); 'any': none or more, `run` checks them. */
  args?: number | 'any';
  run(values: Values<O>, args: string[]): number | Promise<number>;
}

export interface Program<O extends Options> {
  /** The program as messages name it: `venue-box`, `venue-box central`. */
  name: string;
  /** The text of --help (and -h), on stdout. */
  help: string;
  options: O;
  commands: Command<O>[];
}

/** Parses argv by the program's options; a malformed command line is a usage error (64). */
export function parseCommandLine<O extends Options>(
  options: O,
  argv: string[],
): { values: Values<O>; positionals: string[] } {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true });
  } catch (err) {
    throw usageError((err as Error).message);
  }
}

/** Runs the command argv names, after --help; an unknown command or arity is a usage error (64). */
export async function dispatch<O extends Options>(program: Program<O>, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(program.options, argv);
  if ((values as { help?: boolean }).help) {
    process.stdout.write(program.help);
    return 0;
  }
  for (const command of program.commands) {
    const { words, args = 0 } = command;
    const arity = args === 'any' ? positionals.length >= words.length : positionals.length === words.length + args;
    if (!arity || words.some((w, i) => positionals[i] !== w)) continue;
    return command.run(values, positionals.slice(words.length));
  }
  const prefix = program.name.split(' ').slice(1);
  throw usageError(
    positionals.length ? `unknown command: ${[...prefix, ...positionals].join(' ')}` : 'no command given',
  );
}

/**
 * Runs a program and turns an operator's error (a ProcessError) into its exit code and one line on stderr,
 * `<program>: <message>`, a usage error naming --help. Anything else is a bug: thrown on, for the caller's exit 70.
 */
export async function runProgram(name: string, run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof ProcessError)) throw err;
    const hint = err.reason === 'usage' ? ` (run '${name} --help' for usage)` : '';
    process.stderr.write(`${name}: ${err.message}${hint}\n`);
    return err.exitCode;
  }
}

/** The end of the process: exit with the code, or with 70 and the stack trace of a bug. */
export function exitWith(name: string, result: Promise<number>): void {
  result.then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${name}: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(EXIT_CODES.software.code);
    },
  );
}
