import { expect, test } from 'vitest';
import { AppError } from '../../../shared/errors.js';
import { createReadSlots } from './read-slots.js';

test('at most max reads at once, the next ones wait their turn, past the waiting room a 429', async () => {
  const slots = createReadSlots(2, 1, () => 0);
  const gates: (() => void)[] = [];
  const held = () => new Promise<string>((resolve) => gates.push(() => resolve('done')));
  const a = slots.run(held);
  const b = slots.run(held);
  const c = slots.run(held); // waits
  expect(slots.active).toBe(2);
  expect(slots.waiting).toBe(1);
  const refused = await slots.run(held).catch((err: unknown) => err);
  expect(refused).toBeInstanceOf(AppError);
  expect((refused as AppError).status).toBe(429);
  expect((refused as AppError).headers).toEqual({ 'Retry-After': '1' });
  expect(gates).toHaveLength(2); // c has not started
  gates[0]!();
  await a;
  await new Promise((r) => setTimeout(r, 0));
  expect(gates).toHaveLength(3); // c took a's slot
  expect(slots.active).toBe(2);
  gates[1]!();
  gates[2]!();
  expect([await b, await c]).toEqual(['done', 'done']);
  // A read that throws frees its slot too.
  await expect(slots.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  expect(slots.active).toBe(0);
});
