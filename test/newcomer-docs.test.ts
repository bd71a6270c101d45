import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { expect, test } from 'vitest';

/**
 * What a newcomer meets following the README and the walk-throughs of docs/ literally, checked against the
 * repository itself: what the commands write stays out of `git status`, and what the scripts take is documented.
 */
const DOCS = [
  'README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The shell blocks (```sh) of a Markdown file, each line as it stands. */
function shellLines(file: string): string[] {
  const lines: string[] = [];
  let inShell = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^```(sh|bash|shell)\s*$/.test(line.trim())) inShell = true;
    else if (line.trim().startsWith('```')) inShell = false;
    else if (inShell) lines.push(line);
  }
  return lines;
}

/**
 * The relative paths a shell line writes: a redirect's target (`> token.json`, `cat > box/x.json <<JSON`), and
 * what `-o`, `--out`, `--data-dir` and `mkdir -p` name.
 */
function writtenPaths(line: string): string[] {
  if (line.trim().startsWith('#')) return [];
  // Comments, and single-quoted text (a `node -e '...'` program, a JSON body): no shell redirect lives there.
  const code = line.replace(/\s#\s.*$/, '').replace(/'[^']*'/g, "''");
  const found = [
    ...code.matchAll(/(?:^|[^0-9&<>=-])>{1,2}\s*([^\s;|&)<>]+)/g),
    ...code.matchAll(/(?:--(?:out|data-dir)|\s-o)[\s=]+([^\s;|&)]+)/g),
    ...code.matchAll(/mkdir\s+-p\s+([^\s;|&)]+)/g),
  ].map((m) => m[1]!.replace(/^["']|["']$/g, ''));
  // Lower-case relative paths: `DIR` and `$VAR` are placeholders, absolute paths and /dev/null the reader's own.
  return found.filter((p) => /^[a-z0-9_.][a-z0-9_./-]*$/.test(p));
}

test("what the docs' walk-throughs write into the checkout is ignored by git (tokens, keys, data)", () => {
  const written = new Map<string, string>();
  for (const file of DOCS)
    for (const line of shellLines(file)) for (const path of writtenPaths(line)) written.set(path, file);
  // The walk-throughs do write files (token.json, kuchnia.json, release.key, box/...): an empty list would mean the
  // parsing above broke, not that all is well.
  expect(written.size).toBeGreaterThan(5);
  const paths = [...written.keys()];
  // Asked of a path inside each one, so that a directory's pattern (`central-data/`) answers for a directory not
  // made yet, and a file's (`token.json`) still matches its own name.
  const check = spawnSync('git', ['check-ignore', '--no-index', '--stdin'], {
    input: paths.map((p) => `${p}/_`).join('\n'),
    encoding: 'utf8',
  });
  const ignored = new Set(
    check.stdout
      .split('\n')
      .filter(Boolean)
      .map((p) => p.slice(0, -2)),
  );
  const tracked = new Set(
    execFileSync('git', ['ls-files', '--', ...paths], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean),
  );
  const loose = paths.filter((p) => !ignored.has(p) && !tracked.has(p)).map((p) => `${p} (${written.get(p)})`);
  expect(loose).toEqual([]);
});

test('every argument a script in the docs takes is documented where the docs run it', () => {
  // scripts/watch-socket.mjs: its usage line names ACCESS_TOKEN [SINCE] [ws://HOST:PORT]; the walk-through must say
  // how to point it at a box on another address or port.
  const usage = /usage: node scripts\/watch-socket\.mjs ([^']+)'/.exec(
    readFileSync('scripts/watch-socket.mjs', 'utf8'),
  )?.[1];
  expect(usage).toBeDefined();
  const api = readFileSync('docs/api.md', 'utf8');
  for (const arg of usage!.split(/\s+/).map((a) => a.replace(/[[\]]/g, '')))
    expect(api, `docs/api.md names watch-socket's ${arg}`).toContain(arg);
});

test("the README's quick start says how to start the box on another port", () => {
  const start = readFileSync('README.md', 'utf8').split('\n## Tests')[0]!;
  expect(start).toMatch(/npm start -- --port \d+/);
});

test('the installation steps say the screens need their screens.* options on a box without --demo', () => {
  const operations = readFileSync('docs/operations.md', 'utf8');
  const install = operations.slice(
    operations.indexOf('### Install on a box'),
    operations.indexOf('### Where things live'),
  );
  for (const option of ['screens.tenant', 'screens.clientId', 'screens.clientSecret'])
    expect(install, `"Install on a box" names ${option}`).toContain(option);
});
