import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
// @ts-expect-error: a build script in plain JavaScript, without typings
import { makeOneByte } from '../scripts/lib/one-byte.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vb-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("what is left outside ASCII becomes ? for each UTF-16 unit, so a source map's columns still hold", () => {
  const file = join(dir, 'out.cjs');
  const text = '// computes it ONCE \u2014 the previous \ud83d\ude00 way\nconst s = "\\u2014";\n';
  writeFileSync(file, text);
  expect(makeOneByte(file)).toBe(2);
  const out = readFileSync(file, 'utf8');
  expect(out).toBe('// computes it ONCE ? the previous ?? way\nconst s = "\\u2014";\n');
  expect(out.length).toBe(text.length);
  // Already ASCII: left as it was.
  expect(makeOneByte(file)).toBe(0);
  expect(readFileSync(file, 'utf8')).toBe(out);
});

test('the bundle the tests run (dist/main.cjs) is ASCII: V8 holds its source at one byte a character', () => {
  // docs/performance.md "Idle memory": one character beyond Latin-1 doubles the source's 1.9 MB in the heap.
  const bundle = readFileSync(join(root, 'dist/main.cjs'), 'utf8');
  expect(bundle.length).toBeGreaterThan(1_000_000);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range is all of ASCII, control characters included.
  expect(bundle.match(/[^\x00-\x7f]/gu) ?? []).toEqual([]);
});
