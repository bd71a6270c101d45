import { randomInt } from 'node:crypto';

/** A six-digit claim code; uniqueness among a venue's open orders is checked by the caller. */
export const randomClaimCode = (): string => String(randomInt(0, 1_000_000)).padStart(6, '0');

/** Draws codes until `taken` says no; with 10^6 codes a venue's open orders never exhaust it. */
export function pickClaimCode(taken: (code: string) => boolean, draw = randomClaimCode, tries = 100): string {
  for (let i = 0; i < tries; i++) {
    const code = draw();
    if (!taken(code)) return code;
  }
  throw new Error('no free claim code after 100 draws');
}
