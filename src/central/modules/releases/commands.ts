import { readFileSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import pino from 'pino';
import { AppError, ProcessError, usageError } from '../../../shared/errors.js';
import { RELEASE_CHECKS, type SignedRelease } from '../../../shared/release-schemas.js';
import { MAX_REQUEST_BYTES } from '../../../shared/sync-protocol.js';
import type { Pool } from '../../db/pool.js';
import { createTenantRepo } from '../tenants/repo.js';
import { createPatchMaker } from './patches.js';
import { createReleaseService, selfConsistentManifest, type ReleaseListEntry } from './service.js';

/** What the CLI uploads as: the release rows name who uploaded them. */
const CLI_USER = 'cli';

/** The service's refusals as the CLI's exit reasons (docs/operations.md "Exit codes"). */
function asProcessError(err: unknown): unknown {
  if (!(err instanceof AppError)) return err;
  return new ProcessError(err.status === 409 ? 'refused' : 'data', err.message);
}

function readRelease(file: string): SignedRelease {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ProcessError('noInput', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  let signed: unknown;
  try {
    signed = JSON.parse(text);
  } catch {
    throw new ProcessError('data', `${file} is not JSON`);
  }
  if (!RELEASE_CHECKS.signed.Check(signed)) throw new ProcessError('data', `${file} is not a signed release file`);
  try {
    selfConsistentManifest(signed);
  } catch (err) {
    throw new ProcessError('data', `${file}: ${(err as Error).message}`);
  }
  return signed;
}

/** The tenant named, or the only one of the central. */
async function tenantOf(pool: Pool, named: string | undefined): Promise<string> {
  const ids = await createTenantRepo(pool).tenantIds();
  if (named !== undefined) {
    if (!ids.includes(named)) throw new ProcessError('refused', `unknown tenant ${named}`);
    return named;
  }
  if (ids.length !== 1) throw usageError(`the central has ${ids.length} tenants: name one with --tenant`);
  return ids[0]!;
}

/**
 * `venue-box central release upload FILE.release.json [--binary FILE]`: the release file, then its binary in
 * pieces through the same service as the HQ API (a run that was interrupted resumes from the bytes stored), then
 * its patches. One line per result on stdout.
 */
export async function uploadRelease(
  pool: Pool,
  o: { file: string; binary?: string; tenant?: string },
  out: (line: string) => void,
): Promise<void> {
  if (o.binary === undefined && !o.file.endsWith('.release.json')) {
    throw usageError(`${o.file} does not end in .release.json: name the binary with --binary`);
  }
  const binary = o.binary ?? o.file.slice(0, -'.release.json'.length);
  const signed = readRelease(o.file);
  const manifest = selfConsistentManifest(signed);
  let size: number;
  try {
    size = statSync(binary).size;
  } catch (err) {
    throw new ProcessError('noInput', `cannot read ${binary}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  if (size !== manifest.size) {
    throw new ProcessError('data', `${binary} has ${size} bytes; the release file says ${manifest.size}`);
  }
  const tenantId = await tenantOf(pool, o.tenant);
  const releases = createReleaseService(pool);
  const id = `${manifest.version}/${manifest.arch}`;
  try {
    let release = (await releases.create(tenantId, CLI_USER, signed)).release;
    if (release.state === 'ready') return out(`release ${id} is uploaded already (sha256 ${release.sha256})`);
    const input = await open(binary, 'r');
    try {
      for (let pieces = 0; release.received < size && pieces <= Math.ceil(size / MAX_REQUEST_BYTES); pieces++) {
        const start = release.received;
        const buffer = Buffer.alloc(Math.min(MAX_REQUEST_BYTES, size - start));
        const { bytesRead } = await input.read(buffer, 0, buffer.length, start);
        if (bytesRead !== buffer.length) throw new ProcessError('io', `${binary} changed while it was read`);
        release = await releases.append(
          tenantId,
          manifest.version,
          manifest.arch,
          {
            start,
            end: start + buffer.length - 1,
            total: size,
          },
          buffer,
        );
      }
    } finally {
      await input.close();
    }
  } catch (err) {
    throw asProcessError(err);
  }
  out(`release ${id} uploaded: ${size} bytes, sha256 ${manifest.sha256}`);
  const patches = createPatchMaker(pool, { log: pino({ level: 'silent' }), workDir: tmpdir() });
  const outcomes = await patches.makeFor(tenantId, manifest.sha256);
  if (outcomes.length === 0) out(`no patches: no older ready release of ${manifest.arch}`);
  for (const p of outcomes) {
    if ('skipped' in p) out('no patches: zstd is not installed (apt-get install zstd)');
    else if (p.kept) out(`patch from ${p.from}: ${p.size} bytes`);
    else out(`no patch from ${p.from}: ${p.size} bytes is not under half the binary`);
  }
}

/** `venue-box central release list [--json]`: every tenant's releases. */
export async function listReleases(pool: Pool, json: boolean): Promise<string> {
  const list = await createReleaseService(pool).list();
  if (json) return `${JSON.stringify(list)}\n`;
  if (list.length === 0) return 'no releases\n';
  return table(list);
}

function table(list: (ReleaseListEntry & { tenant: string })[]): string {
  const all = [
    ['TENANT', 'RELEASE', 'STATE', 'BYTES', 'SHA256', 'PATCHES FROM', 'RUNNING'],
    ...list.map((r) => [
      r.tenant,
      r.id,
      r.state === 'ready' ? 'ready' : `uploading ${r.received}/${r.size}`,
      String(r.size),
      r.sha256.slice(0, 12),
      r.patches.map((p) => `${p.fromVersion ?? p.from.slice(0, 12)} (${p.size})`).join(', ') || '-',
      String(r.devices.running),
    ]),
  ];
  const widths = all[0]!.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  return `${all
    .map((row) =>
      row
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}
