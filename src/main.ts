import { parseArgs } from 'node:util';
import demo from '../native-config/demo.json';
import pkg from '../package.json';
import { type Box, StartError, startBox } from './box.js';
import { ConfigError, loadConfigFile, resolveConfig } from './config.js';
import { createLogger } from './log.js';
import { ProvisioningError } from './modules/provisioning/service.js';
import { ListenError } from './server.js';

const HELP = `venue-box ${pkg.version}: the ordering and warehouse box of a restaurant

Usage:
  venue-box serve [--host H] [--port N] [--data-dir DIR] [--config FILE] [--demo]
  venue-box --help
  venue-box --version

serve options:
  --host H          address to listen on (default 0.0.0.0)
  --port N          port to listen on (default 8080; 0 takes a free port)
  --data-dir DIR    where the database and signing key live (default ./data)
  --config FILE     configuration file (JSON with comments; see native-config/venue-box.jsonc)
  --demo            provision the built-in demo tenant on first start

Logs are JSON lines on stdout. SIGTERM or SIGINT stops the box cleanly.
`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(argv);
  if (values.help) return print(HELP);
  if (values.version) return print(`${pkg.version}\n`);
  const [command, ...rest] = positionals;
  if (command === 'serve' && rest.length === 0) return serve(values);
  throw new UsageError(command ? `unknown command: ${positionals.join(' ')}` : 'no command given');
}

function parseCli(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
        host: { type: 'string' },
        port: { type: 'string' },
        'data-dir': { type: 'string' },
        config: { type: 'string' },
        demo: { type: 'boolean' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

type CliValues = ReturnType<typeof parseCli>['values'];

async function serve(values: CliValues): Promise<number> {
  const file = values.config ? loadConfigFile(values.config) : {};
  const overrides: Record<string, unknown> = { ...(file as Record<string, unknown>) };
  if (values.host !== undefined) overrides.host = values.host;
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port)) throw new UsageError(`--port must be a number, got ${values.port}`);
    overrides.port = Number(values.port);
  }
  if (values['data-dir'] !== undefined) overrides.dataDir = values['data-dir'];
  const config = resolveConfig(overrides);
  const log = createLogger(config.logLevel);
  const provisioning: { name: string; document: unknown }[] = [];
  if (values.demo) provisioning.push({ name: 'demo', document: demo });
  if (config.provisioningFile) {
    provisioning.push({ name: config.provisioningFile, document: loadConfigFile(config.provisioningFile) });
  }
  const box = await startBox({ config, log, provisioning });
  await untilSignal(box, log);
  return 0;
}

function untilSignal(box: Box, log: ReturnType<typeof createLogger>): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'stopping');
      box.stop().then(resolve, (err: unknown) => {
        log.error({ err }, 'stopping failed');
        resolve();
      });
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
}

function print(text: string): number {
  process.stdout.write(text);
  return 0;
}

const EXPECTED = [UsageError, ConfigError, StartError, ListenError, ProvisioningError];

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (EXPECTED.some((E) => err instanceof E)) {
      process.stderr.write(`venue-box: ${(err as Error).message}\n`);
      if (err instanceof UsageError) process.stderr.write("Run 'venue-box --help' for usage.\n");
      process.exit(err instanceof UsageError ? 64 : 1);
    }
    process.stderr.write(`venue-box: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(70);
  },
);
