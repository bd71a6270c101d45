import { createHash, randomBytes } from 'node:crypto';

/** Crockford's base32: no I, L, O or U, so a code read aloud or off a screen is hard to mistype. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** 16 characters of 5 random bits each: 80 bits, shown as ABCD-EFGH-JKMN-PQRS. */
export function newEnrolCode(): string {
  const bytes = randomBytes(16);
  let code = '';
  for (let i = 0; i < 16; i++) code += ALPHABET[bytes[i]! & 31];
  return code.match(/.{4}/g)!.join('-');
}

/** The code as hashed: upper case, separators dropped, Crockford's look-alikes mapped (I, L -> 1; O -> 0). */
export function canonicalCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '').replace(/[IL]/g, '1').replace(/O/g, '0');
}

/** Only this digest is stored: a database dump does not hand out usable codes. */
export const codeHashOf = (code: string): string => createHash('sha256').update(canonicalCode(code)).digest('hex');
