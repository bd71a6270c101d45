import { expect, test } from 'vitest';
import { createSendBudget } from './send-budget.js';

const socket = (name: string) => ({ name, buffered: 0 });

test('the total follows each socket by difference', () => {
  const budget = createSendBudget(1000, 600);
  const a = socket('a');
  const b = socket('b');
  budget.set(a, 300);
  budget.set(b, 200);
  budget.set(a, 100);
  expect(budget.total()).toBe(300);
  budget.remove(b);
  expect(budget.total()).toBe(100);
});

test('a socket over its own cap is reported at once', () => {
  const budget = createSendBudget(10_000, 600);
  expect(budget.set(socket('a'), 600)).toBe(false);
  expect(budget.set(socket('b'), 601)).toBe(true);
});

test('over budget, the largest sockets are shed first, only as many as needed', () => {
  const budget = createSendBudget<ReturnType<typeof socket>>(1000, 600);
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(socket);
  budget.set(a!, 500);
  budget.set(b!, 300);
  budget.set(c!, 200);
  expect(budget.overBudget()).toEqual([]);
  budget.set(d!, 400);
  expect(budget.overBudget().map((s) => s.name)).toEqual(['a']);
  budget.set(b!, 600);
  expect(budget.overBudget().map((s) => s.name)).toEqual(['b', 'a']);
});

test('drained sockets leave the lagging set and are never shed', () => {
  const budget = createSendBudget(100, 600);
  const a = socket('a');
  const b = socket('b');
  budget.set(a, 500);
  budget.set(b, 50);
  budget.set(a, 0);
  expect(budget.overBudget()).toEqual([]);
  budget.set(b, 150);
  expect(budget.overBudget()).toEqual([b]);
});
