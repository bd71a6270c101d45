import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..');

/** Every TypeScript source of the box (the central's PostgreSQL code aside), tests aside. */
function boxSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return relative(SRC, path) === 'central' ? [] : boxSources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('bound LIMITs (docs/operations.md "What a `new` reads")', () => {
  it('no SQLite statement binds its LIMIT bare: SQLite would prepare it again at every call', () => {
    const bare = boxSources(SRC).flatMap((file) =>
      readFileSync(file, 'utf8').split('\n').flatMap((line, i) =>
        /\bLIMIT\s+[?@:$]/.test(line) ? [`${relative(SRC, file)}:${i + 1}: ${line.trim()}`] : []));
    expect(bare).toEqual([]);
  });

  it('finds the statements it looks for', () => {
    // The scan above passes on an empty list too: the sources it reads hold the statements that bind a LIMIT.
    const plus = boxSources(SRC).filter((file) => /\bLIMIT \+[?@]/.test(readFileSync(file, 'utf8')));
    expect(plus.map((f) => relative(SRC, f)).sort()).toEqual(expect.arrayContaining([
      'modules/events/event-store.ts', 'modules/ordering/repo.ts', 'modules/sync/repo.ts',
    ]));
  });
});
