import { describe, expect, test } from 'vitest';
import { AppError } from './errors.js';
import { Type } from '@sinclair/typebox';
import { Category } from './catalogue-schemas.js';
import { compile, limitOf } from './validate.js';

describe('limitOf', () => {
  const q = (text: string) => new URLSearchParams(text);

  test('takes the fallback when absent, and an integer from 1 to max', () => {
    expect(limitOf(q(''), 50, 200)).toBe(50);
    expect(limitOf(q('limit=1'), 50, 200)).toBe(1);
    expect(limitOf(q('limit=200'), 50, 200)).toBe(200);
  });

  test('refuses anything else as invalidField naming limit', () => {
    for (const bad of ['0', '201', '2.5', '-1', '', 'ten', '1e2', '00001']) {
      let err: unknown;
      try {
        limitOf(q(`limit=${bad}`), 50, 200);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).status).toBe(400);
      expect((err as AppError).codes).toEqual([
        { code: 'invalidField', message: 'limit must be an integer from 1 to 200', args: ['limit'] },
      ]);
    }
  });
});

describe('compile: errors inside a union', () => {
  const check = compile(Type.Object({ root: Category }));
  const product = (id: string, price: unknown) => ({
    kind: 'svc/product',
    id,
    details: { literals: { name: id }, media: [] },
    price,
    minPrice: null,
    selCtx: '',
    fltCtx: '',
    _: { category: 'c' },
  });
  const category = (id: string, items: unknown[]) => ({
    kind: 'svc/group/category',
    id,
    details: { literals: {} },
    items,
  });
  const codesOf = (value: unknown) => {
    try {
      check(value);
    } catch (err) {
      return (err as AppError).codes;
    }
    throw new Error('valid');
  };

  test("name the field of the variant that fits best, so a form can show it by the field's pointer", () => {
    const tree = { root: category('root', [category('soups', [product('zurek', '18.00'), product('rosol', 'x')])]) };
    expect(codesOf(tree).map((c) => c.args[0])).toEqual(['/root/items/0/items/1/price']);
  });

  test('a node whose kind is neither keeps the union error at the node', () => {
    const tree = { root: category('root', [{ kind: 'oops' }]) };
    expect(codesOf(tree).map((c) => c.args[0])).toEqual(['/root/items/0']);
  });

  test('stay cheap on a deep hostile tree (bounded per union)', () => {
    let node: unknown = product('deep', 'not-a-price');
    for (let i = 0; i < 200; i++) node = category(`c${i}`, [node, product(`p${i}`, '1.00')]);
    const started = performance.now();
    const codes = codesOf({ root: node });
    expect(codes[0]!.args[0]).toMatch(/\/price$/);
    // A regression to exponential work would take minutes, not this bound (which holds on a loaded machine too).
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

test('a union of literals keeps its own error: no variant is closer than another', () => {
  const check = compile(Type.Object({ t: Type.Union([Type.Literal('A'), Type.Literal('B')]) }));
  expect(() => check({ t: 'C' })).toThrow(AppError);
  try {
    check({ t: 'C' });
  } catch (err) {
    expect((err as AppError).codes).toEqual([
      { code: 'invalidField', message: '/t: Expected union value', args: ['/t'] },
    ]);
  }
});
