import { expect } from 'vitest';
import { DEMO, type TestBox } from './box.js';
import { command, newOrder } from './orders.js';
import { contractsOf } from './contracts.js';
import { type FakePaper, hasCut } from './fake-printer.js';

export const VENUE = DEMO.openVenue;

/** Spooler timings for tests: quick retries and status polls (the defaults are seconds). */
export const FAST_PRINTING = { retryMinMs: 50, retryMaxMs: 400, statusTimeoutMs: 300, statusPollSeconds: 0.5 };

export interface JobItem {
  id: string;
  printer: string | null;
  orderId: string;
  kind: string;
  state: string;
  copyOf: string | null;
  printedOn: string | null;
  attempts: number;
  lastError: string | null;
  ticket: { lines: { text: string }[]; total: string; claimCode: string };
}

export interface PrinterItem {
  name: string;
  status: string;
  queueDepth: number;
  oldestJobAgeMs: number | null;
  divertedTo: string | null;
  lastError: { reason: string; message: string; at: string } | null;
}

export async function jobsOf(box: TestBox, staff: string, query = ''): Promise<JobItem[]> {
  const res = await box.get(`/printing-api/api/jobs${query}`, staff);
  expect(res.status).toBe(200);
  // Checked against /openapi.json too (test/support/contracts.ts).
  return ((await (await contractsOf(box)).json('GET', '/printing-api/api/jobs', res)) as { items: JobItem[] }).items;
}

export async function printerOf(box: TestBox, staff: string, name: string): Promise<PrinterItem> {
  const res = await box.get('/printing-api/api/printers', staff);
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: PrinterItem[] }).items.find((p) => p.name === name)!;
}

/**
 * A TAKE_AWAY order of `customer` at the open venue, created and submitted without a socket: returns the order
 * id once the submit was processed (its jobs exist, as `staff` sees them).
 */
export async function submitOrder(
  box: TestBox,
  staff: string,
  customer: string,
  lines: { productId: string; quantity: number }[],
): Promise<string> {
  const c = await command(box, customer, 'new', newOrder(VENUE, lines));
  await expect.poll(async () => (await box.get(`/ordering-api/api/order/${c.orderId}`, customer)).status).toBe(200);
  await command(box, customer, `${c.orderId}/submit`, {});
  await expect.poll(async () => (await jobsOf(box, staff)).some((j) => j.orderId === c.orderId)).toBe(true);
  return c.orderId;
}

/**
 * Waits until no job is queued and every job recorded as printed has come off its printer's line (a job is marked
 * printed once written, a moment before the fake reads it). A test takes its mark (`printer.tickets().length`)
 * after this, so that no ticket of another test arrives after the mark: tests run in a random order
 * (test/support/story.ts).
 */
export async function printersIdle(box: TestBox, staff: string, printers: Record<string, FakePaper>): Promise<void> {
  await expect
    .poll(
      async () => {
        const jobs = await jobsOf(box, staff, '?limit=1000');
        if (jobs.some((j) => j.state === 'queued')) return false;
        // At least: a job cut off by an unplugged line between the drain and its commit prints again (at least once).
        return Object.entries(printers).every(
          ([name, p]) => p.tickets().filter(hasCut).length >= jobs.filter((j) => j.printedOn === name).length,
        );
      },
      { timeout: 10_000 },
    )
    .toBe(true);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
