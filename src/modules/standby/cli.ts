import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import pkg from '../../../package.json';
import type { Program } from '../../command-line.js';
import { type Config, loadConfigFile, resolveConfig } from '../../config.js';
import { MIGRATIONS } from '../../db/migrate.js';
import { nowMs } from '../../shared/clock.js';
import { ProcessError, usageError } from '../../shared/errors.js';
import { callLocalBox, localStandbyStatus } from './local-status.js';
import { issuePairingCode, joinPrimary } from './pair.js';
import { formatStandbyStatus } from './status.js';

const USAGE = `Usage:
  venue-box standby code [--data-dir DIR] [--config FILE]
  venue-box standby join PRIMARY_URL --code CODE --self URL [--data-dir DIR] [--config FILE]
  venue-box standby status [--config FILE] [--port N] [--json]
  venue-box standby promote [--config FILE] [--port N]
  venue-box standby check [--config FILE] [--port N]

  code      on the primary: print a one-time pairing code (15 minutes, 5 tries)
  join      on the standby, before its box starts: pair with the primary at PRIMARY_URL (its own
            address, not the floating one); --self is this box's own address as the primary will
            reach it (http://ADDRESS:PORT). What the data directory held is moved to replaced-<time>
  status    this box's role, term, peer, replication state and lag (from the running box)
  promote   on the standby (keepalived's notify_master): take over once the primary is silent
  check     keepalived's track script: exit 0 when this box is the serving primary, or a standby
            that holds a copy it can take over with; 1 otherwise (starting, stopped, no copy yet,
            a release the primary refused)
(docs/operations.md "A standby box")
`;

const OPTIONS = {
  'data-dir': { type: 'string' },
  config: { type: 'string' },
  code: { type: 'string' },
  self: { type: 'string' },
  port: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const RELEASE = { version: pkg.version, schema: MIGRATIONS.at(-1)!.version };

/** `venue-box standby ...`, run by the one front end (src/command-line.ts). */
export const STANDBY: Program<typeof OPTIONS> = {
  name: 'venue-box standby',
  help: USAGE,
  options: OPTIONS,
  commands: [
    {
      words: ['code'],
      run(values) {
        const { dataDir } = configOf(values);
        mkdirSync(dataDir, { recursive: true });
        const { code, expiresAt } = issuePairingCode(dataDir, nowMs());
        process.stdout.write(
          `pairing code: ${code}\nvalid until ${new Date(expiresAt).toISOString()}; on the standby box run:\n  venue-box standby join <this box's address> --code ${code} --self <its own address>\n`,
        );
        return 0;
      },
    },
    {
      words: ['join'],
      args: 1,
      async run(values, [primaryUrl]) {
        if (!values.code) throw usageError('join needs --code CODE (from `venue-box standby code` on the primary)');
        if (!values.self || !/^https?:\/\/[^/?#\s]+$/.test(values.self))
          throw usageError('join needs --self http://ADDRESS:PORT, the address the primary reaches this box at');
        if (!/^https?:\/\/[^/?#\s]+\/?$/.test(primaryUrl!))
          throw usageError(`PRIMARY_URL must be http(s)://host:port, got ${primaryUrl}`);
        const { dataDir } = configOf(values);
        mkdirSync(dataDir, { recursive: true });
        const joined = await joinPrimary({
          dataDir,
          primaryUrl: primaryUrl!,
          code: values.code,
          selfUrl: values.self,
          release: RELEASE,
          nowMs: nowMs(),
        });
        process.stdout.write(
          `paired: this box is the standby of ${joined.state.peer!.url} (term ${joined.state.term})\n${
            joined.movedTo ? `what the data directory held is in ${joined.movedTo}\n` : ''
          }start its service (venue-box serve): it copies the primary and follows it\n`,
        );
        return 0;
      },
    },
    {
      words: ['status'],
      async run(values) {
        const s = await localStandbyStatus(configOf(values));
        process.stdout.write(values.json ? `${JSON.stringify(s, null, 2)}\n` : formatStandbyStatus(s));
        return 0;
      },
    },
    {
      words: ['promote'],
      async run(values) {
        const config = configOf(values);
        const res = await callLocalBox(config, '/standby-api/promote', 'POST', 15_000);
        const body = (await res.json().catch(() => ({}))) as { term?: number; message?: string };
        if (!res.ok) throw new ProcessError('refused', `not promoted: ${body.message ?? res.status}`);
        if (res.status === 202) {
          // keepalived asks once: the box goes on claiming, and takes over once the central lets the primary go.
          process.stdout.write(`takeover requested; it waits: ${body.message}\n`);
          return 0;
        }
        process.stdout.write(`this box is the primary (term ${body.term})\n`);
        return 0;
      },
    },
    {
      words: ['check'],
      async run(values) {
        const config = configOf(values);
        try {
          const ready = await callLocalBox(config, '/readyz', 'GET', 2000);
          if (ready.ok) return 0;
          // A standby holding a copy it can take over with, whether or not its primary speaks now.
          const s = await localStandbyStatus(config);
          // 'promoting': it holds the floating address and waits for the central to let the primary go.
          return s.role === 'standby' && ['following', 'connecting', 'promoting'].includes(s.state) ? 0 : 1;
        } catch {
          return 1;
        }
      },
    },
  ],
};

function configOf(values: { 'data-dir'?: string; config?: string; port?: string }): Config & { dataDir: string } {
  const config = resolveConfig(values.config ? loadConfigFile(values.config) : {});
  if (values.port !== undefined && !/^\d{1,5}$/.test(values.port))
    throw usageError(`--port must be a number, got ${values.port}`);
  return {
    ...config,
    port: values.port === undefined ? config.port : Number(values.port),
    dataDir: resolve(values['data-dir'] ?? config.dataDir),
  };
}
