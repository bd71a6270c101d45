import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { command, newOrder } from './support/orders.js';
import { freePort } from './support/ports.js';
import { drained, FAST_SYNC, hqOrders, syncStatus, waitFor } from './support/sync.js';
import { nginxConf } from './support/nginx.js';
import { SYSTEM_PACKAGES, skipWithout } from './support/system-packages.js';
import { staff } from './warehouse-client.js';

// The central behind a TLS-terminating nginx, as docs/sync.md "TLS in front of the central" shows it: a box enrols
// at https://, trusts the proxy's certificate through NODE_EXTRA_CA_CERTS, and syncs through it both ways.
// openssl makes the certificate.
const skip = skipWithout(import.meta.url, 'nginx', 'openssl');

let dir: string | undefined;
let nginx: ChildProcess | undefined;
let central: TestCentral | undefined;
let box: TestBox | undefined;
afterAll(async () => {
  await box?.stop();
  if (nginx && nginx.exitCode === null) {
    const exited = new Promise((r) => nginx!.on('exit', r));
    nginx.kill('SIGTERM');
    await exited;
  }
  await central?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A self-signed certificate for localhost and 127.0.0.1, as an operator's own CA would issue one. */
function certificate(into: string): { cert: string; key: string } {
  const cert = join(into, 'central.crt');
  const key = join(into, 'central.key');
  execFileSync(
    SYSTEM_PACKAGES.openssl,
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

/** nginx terminating TLS in front of the central: the server block of docs/sync.md, in a temp prefix. */
async function startTlsProxy(into: string, upstreamPort: number, tls: { cert: string; key: string }) {
  const port = await freePort();
  writeFileSync(
    join(into, 'nginx.conf'),
    nginxConf(
      into,
      `  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${tls.cert};
    ssl_certificate_key ${tls.key};
    ssl_protocols TLSv1.2 TLSv1.3;
    client_max_body_size 5m;
    location / {
      proxy_pass http://127.0.0.1:${upstreamPort};
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto https;
      proxy_request_buffering off;
      proxy_read_timeout 90s;
    }
  }`,
    ),
  );
  const proc = spawn('nginx', ['-p', into, '-e', join(into, 'error.log'), '-c', join(into, 'nginx.conf')], {
    stdio: 'ignore',
  });
  await waitFor(
    'nginx to answer over TLS',
    async () => {
      if (proc.exitCode !== null)
        throw new Error(`nginx exited ${proc.exitCode}: ${readFileSync(join(into, 'error.log'), 'utf8')}`);
      return (await runCli(['--version'], { NODE_EXTRA_CA_CERTS: tls.cert }, `https://localhost:${port}/readyz`)).ok;
    },
    10_000,
  );
  return { proc, port };
}

/** `venue-box ...` with an environment of its own; with `probe`, a fetch of that URL by a Node with the same one. */
function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  probe?: string,
): Promise<{ ok: boolean; code: number; stdout: string; stderr: string }> {
  const argv = probe
    ? ['-e', `fetch(${JSON.stringify(probe)}).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(2))`]
    : ['dist/main.cjs', ...args];
  return new Promise((resolve) => {
    execFile(process.execPath, argv, { env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? Number((err as { code?: unknown }).code ?? -1) : 0;
      resolve({ ok: code === 0, code, stdout, stderr });
    });
  });
}

describe.skipIf(skip)('the central behind TLS', () => {
  test('a box enrols at https://, sends its orders and takes its catalogue through the proxy', async () => {
    dir = mkdtempSync(join(tmpdir(), 'vb-tls-'));
    const tls = certificate(dir);
    central = await startTestCentral();
    const proxy = await startTlsProxy(dir, Number(new URL(central.url('')).port), tls);
    nginx = proxy.proc;
    const https = `https://localhost:${proxy.port}`;
    const trust = { NODE_EXTRA_CA_CERTS: tls.cert };

    box = await startTestBox({ config: FAST_SYNC, env: trust });
    const code = await central.enrolCode(DEMO.openVenue);
    // Without the certificate trusted, the box will not talk to it: TLS is checked, not only spoken.
    const untrusted = await runCli(
      ['sync', 'enrol', '--data-dir', box.dataDir, '--central', https, '--code', code],
      {},
    );
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(/SELF_SIGNED|self[- ]signed|certificate/i);
    const enrolled = await runCli(
      ['sync', 'enrol', '--data-dir', box.dataDir, '--central', https, '--code', code],
      trust,
    );
    expect(enrolled.code, enrolled.stderr).toBe(0);
    expect(enrolled.stderr).not.toMatch(/plain http/);

    const s = await staff(box);
    const { orderId } = await command(
      box,
      s.token,
      'new',
      newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 1 }]),
    );
    await drained(box);
    expect((await hqOrders(central, DEMO.openVenue)).map((o) => o.id)).toContain(orderId);
    // The catalogue came down the same way (its answers carry the staff's password hashes: docs/sync.md "TLS in front of the central").
    await waitFor('the catalogue through TLS', async () => ((await syncStatus(box!)).catalogue?.rev ?? 0) > 0, 30_000);

    const log = readFileSync(join(dir, 'access.log'), 'utf8');
    for (const path of ['/sync-api/api/hello', '/sync-api/api/batches', '/sync-api/api/catalogue'])
      expect(log).toContain(path);
    const device = (await central.hq('/hq-api/api/devices'))[0];
    expect(device.head.seq).toBeGreaterThan(0);
  }, 120_000);
});
