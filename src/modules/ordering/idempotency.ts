import { createHash } from 'node:crypto';
import { AppError, invalidField } from '../../shared/errors.js';
import type { IdempotencyRepo } from './idempotency-repo.js';

/** An order command's Idempotency-Key and the fingerprint of what was sent with it. */
export interface IdempotencyRequest {
  key: string;
  fingerprint: string;
}

// VCHAR (RFC 5234): printable ASCII, no space or control characters; 255 is Stripe's and Square's limit.
// A key sent twice arrives comma-joined with a space (src/http/mount.ts) and is refused here too.
const KEY = /^[\x21-\x7e]{1,255}$/;

/** The request's Idempotency-Key (undefined without one), fingerprinted with its path and parsed body; 400 if malformed. */
export function idempotencyOf(
  headers: Record<string, string>,
  path: string,
  body: unknown,
): IdempotencyRequest | undefined {
  const key = headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (!KEY.test(key))
    throw invalidField('Idempotency-Key', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  return { key, fingerprint: fingerprintOf(path, body) };
}

/**
 * sha256 of the path and the parsed body in canonical form: a retry is recognised whatever its whitespace or
 * key order. An absent body counts as {}, as the commands that take an optional body read it that way.
 */
export function fingerprintOf(path: string, body: unknown): string {
  return createHash('sha256')
    .update(path)
    .update('\n')
    .update(canonicalJson(body ?? {}))
    .digest('hex');
}

/** JSON with object keys sorted at every level (the values of parsed JSON: no undefined, functions or cycles). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

const reused = (): AppError =>
  AppError.of('idempotencyKeyReused', 'this Idempotency-Key was used for another request', ['Idempotency-Key']);

/**
 * Confirms each (tenant, user, key) once. A stored key answers with the confirmation it got, byte for byte.
 * A key whose command is queued but not yet committed (a duplicate in the same tick) waits for that command's
 * outcome instead of queueing a second one. The in-flight entry is dropped only once the outcome is known,
 * and the row is committed before that, so a later duplicate always finds one or the other.
 */
export function createIdempotencyGuard(repo: IdempotencyRepo) {
  const inFlight = new Map<string, { fingerprint: string; reply: Promise<string> }>();
  return {
    once(tenantId: string, userId: string, req: IdempotencyRequest, confirm: () => Promise<string>): Promise<string> {
      const scope = JSON.stringify([tenantId, userId, req.key]);
      const pending = inFlight.get(scope);
      if (pending) {
        if (pending.fingerprint !== req.fingerprint) throw reused();
        return pending.reply;
      }
      const stored = repo.find(tenantId, userId, req.key);
      if (stored) {
        if (stored.fingerprint !== req.fingerprint) throw reused();
        return Promise.resolve(stored.response);
      }
      const reply = confirm();
      inFlight.set(scope, { fingerprint: req.fingerprint, reply });
      const forget = () => inFlight.delete(scope);
      reply.then(forget, forget);
      return reply;
    },
  };
}
