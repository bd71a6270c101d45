import { language } from './i18n.js';

/**
 * A field's message from the central, as shown next to its input (docs/console.md "How it behaves"): without the
 * JSON pointer the central puts first (the input is the field), and in Polish when the page is, for the messages
 * the central's schema checks give (TypeBox's wording: src/shared/validate.ts). Anything else is shown as sent.
 */
const POLISH: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^Expected required property$/, () => 'pole wymagane'],
  [/^Expected string to match '.*'$/, () => 'nieprawidłowy format'],
  [/^Expected string to match '(.+)' format$/, (m) => `nieprawidłowy format (${m[1]})`],
  [/^Expected string length greater or equal to (\d+)$/, (m) => `co najmniej ${m[1]} znaków`],
  [/^Expected string length less or equal to (\d+)$/, (m) => `najwyżej ${m[1]} znaków`],
  [/^Expected (?:number|integer) to be greater or equal to (-?[\d.]+)$/, (m) => `co najmniej ${m[1]}`],
  [/^Expected (?:number|integer) to be less or equal to (-?[\d.]+)$/, (m) => `najwyżej ${m[1]}`],
  [/^Expected (?:number|integer) to be greater than (-?[\d.]+)$/, (m) => `więcej niż ${m[1]}`],
  [/^Expected (?:number|integer) to be less than (-?[\d.]+)$/, (m) => `mniej niż ${m[1]}`],
  [/^Expected integer$/, () => 'liczba całkowita'],
  [/^Expected number$/, () => 'liczba'],
  [/^Expected string$/, () => 'tekst'],
  [/^Expected boolean$/, () => 'tak lub nie'],
  [/^Expected array length to be greater or equal to (\d+)$/, (m) => `co najmniej ${m[1]} pozycji`],
  [/^Expected array length to be less or equal to (\d+)$/, (m) => `najwyżej ${m[1]} pozycji`],
  [/^Expected union value$/, () => 'nieprawidłowa wartość'],
  [/^Expected '(.+)'$/, (m) => `oczekiwano ${m[1]}`],
];

export function fieldMessage(message: string, pointer: string): string {
  const bare = message.startsWith(`${pointer}: `) ? message.slice(pointer.length + 2) : message;
  if (language.value !== 'pl') return bare;
  for (const [pattern, polish] of POLISH) {
    const m = pattern.exec(bare);
    if (m) return polish(m);
  }
  return bare;
}
