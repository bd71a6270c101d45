import { describe, expect, test } from 'vitest';
import { AppError } from './errors.js';
import { limitOf } from './validate.js';

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
