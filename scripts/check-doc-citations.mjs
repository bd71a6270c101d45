#!/usr/bin/env node
// Every citation of a section, `docs/<file>.md "Heading"` (README.md's links too: `[docs/x.md](docs/x.md)
// "Heading"`), must name a heading of that file. A citation may shorten a heading to the part before its colon or
// its parenthesis: "Storage" names "Storage: a full disk, ...", "Known gotchas" names "Known gotchas (printing)".
// Lists the broken ones and exits 1; exits 0 when every citation holds. Usage: node scripts/check-doc-citations.mjs
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SCANNED = ['src', 'test', 'scripts', 'web', 'native-config', 'docs', 'README.md'];
const TEXT = /\.(ts|tsx|mjs|cjs|js|md|json|jsonc|sh|service|rules|css|html)$/;
const CITATION = /docs\/([a-z0-9-]+)\.md\)?\s+"([^"\n]+)"/g;

/** The headings of a Markdown file, outside its code fences, without their #s. */
function headingsOf(file) {
  const headings = [];
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6} +(.+?)\s*$/.exec(line);
    if (m) headings.push(m[1]);
  }
  return headings;
}

const names = (heading, cited) =>
  heading === cited || heading.startsWith(`${cited}:`) || heading.startsWith(`${cited} (`);

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', ...SCANNED], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => TEXT.test(f) && existsSync(join(root, f)));
const headings = new Map();
const broken = [];
let count = 0;
for (const file of files) {
  const text = readFileSync(join(root, file), 'utf8');
  for (const m of text.matchAll(CITATION)) {
    count++;
    const [, doc, cited] = m;
    const target = join(root, 'docs', `${doc}.md`);
    if (!headings.has(doc)) headings.set(doc, existsSync(target) ? headingsOf(target) : undefined);
    const list = headings.get(doc);
    if (list?.some((h) => names(h, cited))) continue;
    const line = text.slice(0, m.index).split('\n').length;
    broken.push(`${file}:${line}: docs/${doc}.md "${cited}"${list ? '' : ' (no such file)'}`);
  }
}
if (broken.length > 0) {
  console.error(`${broken.length} of ${count} citations name no heading:`);
  for (const b of broken) console.error(`  ${b}`);
  process.exit(1);
}
console.log(`${count} citations, each names a heading`);
