// V8 keeps a script's source in memory for as long as the script lives (it compiles functions lazily, at their first
// call, from that text), at one byte a character only when every character fits in one (Latin-1). A single
// character beyond that stores the whole text at two bytes a character: the box's 1.9 MB bundle took 3.9 MB of
// heap for one em dash in a dependency's comment (docs/performance.md "Idle memory").
// esbuild writes code in ASCII (`charset: 'ascii'`: strings, regular expressions and names escaped) but copies
// comments as they are, so whatever is not ASCII in its output is inside a comment. Each such character becomes
// '?' here ('??' for one outside the Basic Multilingual Plane, the two UTF-16 units it was), so that the columns
// of a source map still point where they did.
import { readFileSync, writeFileSync } from 'node:fs';

// biome-ignore lint/suspicious/noControlCharactersInRegex: the range is all of ASCII, control characters included.
const NOT_ASCII = /[^\x00-\x7f]/gu;

/** Rewrites an esbuild output file in place as above; returns how many characters it replaced. */
export function makeOneByte(file) {
  const text = readFileSync(file, 'utf8');
  let replaced = 0;
  const out = text.replace(NOT_ASCII, (c) => {
    replaced++;
    return '?'.repeat(c.length);
  });
  if (replaced > 0) writeFileSync(file, out);
  return replaced;
}
