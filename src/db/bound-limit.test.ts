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

describe('bound LIMITs (docs/performance.md "What a `new` reads")', () => {
  it('no SQLite statement binds its LIMIT bare: SQLite would prepare it again at every call', () => {
    // The whole text, not line by line: a LIMIT and its parameter may stand on two lines.
    const bare = boxSources(SRC).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return [...text.matchAll(/\bLIMIT\s+[?@:$]/g)].map(
        (m) => `${relative(SRC, file)}:${text.slice(0, m.index).split('\n').length}: ${m[0].replace(/\s+/g, ' ')}`,
      );
    });
    expect(bare).toEqual([]);
  });

  it('finds the statements it looks for', () => {
    // The scan above passes on an empty list too: the sources it reads hold the statements that bind a LIMIT.
    const plus = boxSources(SRC).filter((file) => /\bLIMIT \+[?@]/.test(readFileSync(file, 'utf8')));
    expect(plus.map((f) => relative(SRC, f)).sort()).toEqual(
      expect.arrayContaining(['modules/events/event-store.ts', 'modules/ordering/repo.ts', 'modules/sync/repo.ts']),
    );
  });
});
