import { withPool } from './cli-database.js';
import { ProcessError, usageError } from '../shared/errors.js';
import {
  type DeadLetterView,
  listDeadLetters,
  parseDeadLetterId,
  type ReplayOutcome,
  retryDeadLetters,
} from './modules/ingest/dead-letters.js';

/**
 * `venue-box central dead-letters list|retry` (docs/sync.md "Dead letters", docs/operations.md "Command line"):
 * what the ingest set aside, and its replay once the cause is fixed. Kept out of cli.ts, which only names them.
 */

export interface DeadLetterValues {
  'data-dir'?: string;
  'database-url'?: string;
  tenant?: string;
  device?: string;
  all?: boolean;
  json?: boolean;
}

export const DEAD_LETTERS_USAGE = `  venue-box central dead-letters list [--tenant T] [--device D] [--all] [--json] [--data-dir DIR] [--database-url URL]
  venue-box central dead-letters retry ID... | --all [--tenant T] [--device D] [--data-dir DIR] [--database-url URL]
`;

export const DEAD_LETTERS_HELP = `dead-letters list shows the events the central set aside and why (--all: those replayed since too); an ID is
DEVICE:SEQ. dead-letters retry projects them again once the cause is fixed (each ID, or with --all every waiting
one, of --tenant and --device when given); retrying twice changes nothing more; exit 1 when one is still refused.
`;

export async function deadLettersList(values: DeadLetterValues): Promise<number> {
  const list = await withPool(values, (pool) =>
    listDeadLetters(pool, { tenant: values.tenant, device: values.device, resolved: values.all === true }),
  );
  process.stdout.write(values.json ? `${JSON.stringify(list)}\n` : table(list));
  return 0;
}

export async function deadLettersRetry(values: DeadLetterValues, ids: string[]): Promise<number> {
  if (ids.length > 0 && (values.all || values.tenant !== undefined || values.device !== undefined))
    throw usageError('dead-letters retry takes IDs, or --all (with --tenant and --device), not both');
  if (ids.length === 0 && !values.all) throw usageError('dead-letters retry needs IDs (DEVICE:SEQ) or --all');
  const parsed = ids.map((id) => {
    const p = parseDeadLetterId(id);
    if (!p) throw usageError(`a dead letter's ID is DEVICE:SEQ, got ${id.slice(0, 100)}`);
    return p;
  });
  const outcomes = await withPool(values, (pool) =>
    retryDeadLetters(
      pool,
      ids.length > 0 ? { ids: parsed } : { filter: { tenant: values.tenant, device: values.device } },
    ),
  );
  for (const o of outcomes) process.stdout.write(`${o.id} ${says(o)}\n`);
  const replayed = outcomes.filter((o) => o.outcome === 'replayed').length;
  const refused = outcomes.filter((o) => o.outcome === 'failed' || o.outcome === 'unknown').length;
  process.stdout.write(`${replayed} replayed, ${refused} not\n`);
  if (refused > 0) throw new ProcessError('refused', `${refused} dead letter(s) not replayed`);
  return 0;
}

function says(o: ReplayOutcome): string {
  switch (o.outcome) {
    case 'replayed':
      return 'replayed';
    case 'alreadyReplayed':
      return 'replayed already';
    case 'failed':
      return `still a dead letter: ${o.reason}`;
    case 'unknown':
      return 'no such dead letter';
  }
}

function table(list: DeadLetterView[]): string {
  if (list.length === 0) return 'no dead letters\n';
  const all = [
    ['ID', 'TENANT', 'KIND', 'RECEIVED', 'RETRIES', 'STATE', 'REASON'],
    ...list.map((d) => [
      d.id,
      d.tenant,
      d.kind ?? '-',
      d.receivedAt,
      String(d.retries),
      d.resolvedAt ? `replayed ${d.resolvedAt}` : 'waiting',
      d.reason.replace(/\s+/g, ' '),
    ]),
  ];
  const widths = all[0]!.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  return `${all.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n')}\n`;
}
