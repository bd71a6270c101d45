import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/**
 * axe-core in the page (the box's screens and the headquarters console: docs/screens.md "Accessibility and layout"). It is
 * injected as an inline script, so the page's context needs `bypassCSP: true` (both apps' CSP is script-src 'self').
 */
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: { target: string[] }[];
}

/** Every axe-core violation on the page as it is now, with its impact. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.addScriptTag({ content: axeSource });
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n) => ({ target: n.target })),
    }));
  });
}

/** A violation as one line: rule id, impact and the first offending nodes. */
export const describeViolation = (v: AxeViolation): string =>
  `${v.id} (${v.impact}): ${v.nodes
    .slice(0, 3)
    .map((n) => n.target.join(' '))
    .join(' | ')}`;

/** axe-core's critical and serious violations on the page as it is now (rule id and the first offending nodes). */
export async function seriousViolations(page: Page): Promise<string[]> {
  return (await axeViolations(page))
    .filter((v) => v.impact === 'critical' || v.impact === 'serious')
    .map(describeViolation);
}
