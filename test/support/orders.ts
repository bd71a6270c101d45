import { expect } from 'vitest';
import type { TestBox } from './box.js';

export interface Confirmation {
  correlationId: string;
  orderId: string;
  lines: string[];
}

export interface Line {
  productId: string;
  quantity: number;
  price?: number;
  status?: string;
  extra?: { note?: string };
}

/** POSTs an order command and returns its 200 confirmation. */
export async function command(box: TestBox, token: string, path: string, body: unknown): Promise<Confirmation> {
  const res = await box.post(`/ordering-api/api/order/${path}`, token, body);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as Confirmation;
}

export const newOrder = (venue: string, lines?: Line[], orderType = 'TAKE_AWAY') => ({
  orderType,
  buckets: [{ venue, ...(lines ? { lines } : {}) }],
});

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
