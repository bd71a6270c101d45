import { expect, test } from 'vitest';
import { databaseUnavailable, unstorableText } from './pool.js';

test("a busy or absent database is a 503 with Retry-After; anything else stays the caller's error", () => {
  for (const err of [
    new Error('timeout exceeded when trying to connect'),
    new Error('Connection terminated unexpectedly'),
    Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    Object.assign(new Error('sorry, too many clients already'), { code: '53300' }),
    // A transaction's client whose connection the server ended between two of its statements.
    new Error('Client has encountered a connection error and is not queryable'),
  ]) {
    const answer = databaseUnavailable(err);
    expect(answer?.status, err.message).toBe(503);
    expect(answer?.headers).toEqual({ 'Retry-After': '2' });
  }
  expect(databaseUnavailable(Object.assign(new Error('syntax error'), { code: '42601' }))).toBeUndefined();
  expect(databaseUnavailable(new TypeError('x is undefined'))).toBeUndefined();
  expect(databaseUnavailable(null)).toBeUndefined();
});

test("text the database cannot store is a 400 invalidBody; other data errors stay the caller's", () => {
  for (const err of [
    Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' }),
    Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' }),
    Object.assign(new Error('invalid input syntax for type json'), { code: '22P02' }),
  ]) {
    expect(unstorableText(err)?.status, err.message).toBe(400);
    expect(unstorableText(err)?.codes[0]?.code).toBe('invalidBody');
  }
  expect(unstorableText(Object.assign(new Error('invalid input syntax for type uuid'), { code: '22P02' }))).toBe(
    undefined,
  );
  expect(unstorableText(Object.assign(new Error('division by zero'), { code: '22012' }))).toBeUndefined();
  expect(unstorableText(null)).toBeUndefined();
});
