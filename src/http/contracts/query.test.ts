import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { AppError } from '../../shared/errors.js';
import { LimitParam, ListOf, OneOf, queryValidator } from './query.js';

const Query = Type.Object({
  lat: Type.Number({ minimum: -90, maximum: 90 }),
  limit: LimitParam(50, 200),
  channel: Type.Optional(OneOf(['DINE_IN', 'TAKE_AWAY'] as const)),
  status: Type.Optional(ListOf(['NEW', 'READY'] as const, 'statuses')),
  q: Type.Optional(Type.String({ minLength: 2, maxLength: 5 })),
});
const check = queryValidator(Query);
const read = (text: string) => check(new URLSearchParams(text));

/** The 400's one code: invalidField naming the parameter, and its message. */
function refusal(text: string): { args: readonly string[]; message: string } {
  try {
    read(text);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    const codes = (err as AppError).codes;
    expect(codes).toHaveLength(1);
    expect(codes[0]!.code).toBe('invalidField');
    return { args: codes[0]!.args, message: codes[0]!.message };
  }
  throw new Error(`${text} was taken`);
}

describe('a query checked by its schema', () => {
  test('values are coerced to their types: numbers in JSON syntax, integers, lists; others ignored', () => {
    expect(read('lat=5.00614e1&limit=007&channel=DINE_IN&status=NEW,%20READY&other=x')).toEqual({
      lat: 50.0614,
      limit: 7,
      channel: 'DINE_IN',
      status: ['NEW', 'READY'],
    });
    expect(read('lat=-90')).toEqual({ lat: -90 });
  });

  test.each([
    ['', 'lat', /lat is required: a number from -90 to 90/],
    ['lat=90.5', 'lat', /lat must be a number from -90 to 90/],
    ['lat=0x10', 'lat', /lat must be a number/],
    ['lat=%20', 'lat', /lat must be a number/],
    ['lat=1e400', 'lat', /lat must be a number/],
    ['lat=1&limit=0', 'limit', /limit must be an integer from 1 to 200/],
    ['lat=1&limit=1.5', 'limit', /limit must be an integer/],
    ['lat=1&limit=%2B5', 'limit', /limit must be an integer/],
    ['lat=1&channel=PICNIC', 'channel', /channel must be one of DINE_IN, TAKE_AWAY/],
    ['lat=1&status=NEW,LOST', 'status', /status must be one or more of NEW, READY, separated by commas/],
    ['lat=1&q=x', 'q', /q must be 2 to 5 characters/],
  ])('%j is a 400 naming %s', (text, name, message) => {
    const { args, message: said } = refusal(text);
    expect(args).toEqual([name]);
    expect(said).toMatch(message);
  });

  test('one parameter is named: a missing required one, else the first invalid one in the schema', () => {
    expect(refusal('limit=0&channel=x').args).toEqual(['lat']);
    expect(refusal('lat=1&limit=0&channel=x').args).toEqual(['limit']);
  });

  test('a schema a query string cannot carry fails when it is compiled (at mount), not at a request', () => {
    expect(() => queryValidator(Type.Object({ filter: Type.Object({ a: Type.String() }) }))).toThrow(/filter/);
    expect(() => queryValidator(Type.Object({ ids: Type.Array(Type.Integer()) }))).toThrow(/ids/);
    expect(() => queryValidator(Type.String())).toThrow(/object of parameters/);
  });
});
