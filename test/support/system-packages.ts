import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The Debian packages some tests drive, each with a file that shows it is installed (README "Tests": the full
 * suite needs them all; .ci/run installs them). A test file without one skips, with one line naming it.
 */
export const SYSTEM_PACKAGES = {
  socat: '/usr/bin/socat',
  chromium: '/usr/bin/chromium',
  faketime: `/usr/lib/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu/faketime/libfaketime.so.1`,
  systemd: '/usr/bin/systemd-notify',
  python3: '/usr/bin/python3',
  zstd: '/usr/bin/zstd',
  iproute2: '/usr/sbin/ip',
  keepalived: '/usr/sbin/keepalived',
  'postgresql-15': '/usr/lib/postgresql/15/bin/postgres',
  haproxy: '/usr/sbin/haproxy',
  nginx: '/usr/sbin/nginx',
  openssl: '/usr/bin/openssl',
  prometheus: '/usr/bin/promtool',
  'python3-authlib': '/usr/lib/python3/dist-packages/authlib/__init__.py',
} as const;

export type SystemPackage = keyof typeof SYSTEM_PACKAGES;

/**
 * How the tests and scripts/screenshots.mjs start Debian's chromium (playwright-core): as root in a container
 * (no sandbox), no GPU, and nothing of its own on the network (no QUIC, background fetches, updates or sync).
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * True (skip) when one of `packages` is missing, after one warning line: `test/x.test.ts skipped: needs the
 * Debian package socat (apt-get install socat)`. `testFile` is the caller's `import.meta.url`.
 */
export function skipWithout(testFile: string, ...packages: SystemPackage[]): boolean {
  const missing = packages.filter((p) => !existsSync(SYSTEM_PACKAGES[p]));
  if (missing.length === 0) return false;
  const file = relative(process.cwd(), fileURLToPath(testFile));
  const names = missing.join(' ');
  console.warn(
    `${file} skipped: needs the Debian package${missing.length > 1 ? 's' : ''} ${names} (apt-get install ${names})`,
  );
  return true;
}
