import CodepageEncoder, { type Codepage } from '@point-of-sale/codepage-encoder';

/**
 * Typographic characters that a receipt printer's code page seldom has, and what to print instead. Looked up
 * only for a character the code page lacks: cp852 has `«`, `»` and `ß`, so those print as themselves there.
 */
const REPLACEMENTS: Record<string, string> = {
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2015': '-',
  '\u2212': '-',
  '\u2018': "'",
  '\u2019': "'",
  '\u201A': "'",
  '\u201B': "'",
  '\u2032': "'",
  '\u2039': "'",
  '\u203A': "'",
  '\u201C': '"',
  '\u201D': '"',
  '\u201E': '"',
  '\u201F': '"',
  '\u2033': '"',
  '\u00AB': '"',
  '\u00BB': '"',
  '\u2026': '...',
  '\u2022': '*',
  '\u00B7': '.',
  '\u2122': 'TM',
  '\u20AC': 'EUR',
  '\u00A0': ' ',
  '\u2007': ' ',
  '\u2009': ' ',
  '\u202F': ' ',
  '\u200B': '',
  // Letters that Unicode does not decompose into a base letter and a mark.
  ß: 'ss',
  Æ: 'AE',
  æ: 'ae',
  Œ: 'OE',
  œ: 'oe',
  Ø: 'O',
  ø: 'o',
  Đ: 'D',
  đ: 'd',
  Ł: 'L',
  ł: 'l',
  Þ: 'Th',
  þ: 'th',
  ı: 'i',
};

const printable = new Map<string, Set<number>>();
function printableIn(codePage: string): Set<number> {
  let set = printable.get(codePage);
  if (!set) {
    set = new Set(CodepageEncoder.getEncoding(codePage as Codepage).codepoints);
    printable.set(codePage, set);
  }
  return set;
}

/**
 * Text as a printer with this code page can print it, before the encoder turns what it lacks into `?`: a
 * character of the code page is kept (cp852's Polish letters among them); else a typographic one is replaced
 * (an em dash by `-`, curly quotes by straight ones, an ellipsis by `...`); else a letter is printed as its base
 * letter (NFD without its marks: `ñ` -> `n`); only then `?`, once per character (an emoji too, not once per
 * UTF-16 unit). Control characters become spaces: on an ESC/POS printer they would be commands.
 */
export function transliterate(text: string, codePage: string): string {
  const ok = printableIn(codePage);
  const fits = (s: string) => [...s].every((c) => ok.has(c.codePointAt(0)!));
  let out = '';
  for (const ch of text.normalize('NFC')) {
    if (/\p{Cc}/u.test(ch)) {
      out += ' ';
      continue;
    }
    if (ok.has(ch.codePointAt(0)!)) {
      out += ch;
      continue;
    }
    const replacement = REPLACEMENTS[ch];
    if (replacement !== undefined && fits(replacement)) {
      out += replacement;
      continue;
    }
    const base = ch.normalize('NFD').replace(/\p{M}/gu, '');
    if (base !== ch && fits(base))
      out += base; // a lone combining mark leaves '' and prints nothing
    else out += '?';
  }
  return out;
}
