import { Type } from '@sinclair/typebox';
import { json, type Route, route } from '../../../http/types.js';
import { invalidField, notFound } from '../../../shared/errors.js';
import { ARCHS, RELEASE_PATHS, SHA256_PATTERN, SignedRelease, Version } from '../../../shared/release-schemas.js';
import { MAX_REQUEST_BYTES } from '../../../shared/sync-protocol.js';
import { ok, SIGNED_HEADERS } from '../../contracts.js';
import type { DeviceService } from '../devices/service.js';
import { parseContentRange } from './ranges.js';
import type { RolloutService } from './rollout-service.js';
import { HaltBody, RolloutBody } from './schemas.js';
import type { ReleaseService } from './service.js';

const AnObject = (description: string) => Type.Object({}, { additionalProperties: true, description });
const SHA256 = new RegExp(SHA256_PATTERN);
const VERSION = new RegExp(Version.pattern!);
const BASE = '/hq-api/api';

/** The `:version/:arch` of a release's path: a 400 naming the parameter otherwise. */
function releaseId(params: Record<string, string>): { version: string; arch: string } {
  const { version = '', arch = '' } = params;
  if (!VERSION.test(version)) throw invalidField('version', 'version must be MAJOR.MINOR.PATCH[-PRE]');
  if (!(ARCHS as readonly string[]).includes(arch))
    throw invalidField('arch', `arch must be one of ${ARCHS.join(', ')}`);
  return { version, arch };
}

const BYTES = { 206: { description: 'the bytes of the Range', contentType: 'application/octet-stream' } };
const DOWNLOAD_HEADERS = [
  ...SIGNED_HEADERS,
  { name: 'Range', required: true, description: '`bytes=A-B`, at most 8 MiB (416 otherwise)' },
];

/**
 * Releases and rollouts (docs/sync.md "Releases and rollouts"): headquarters' API to upload releases and run
 * rollouts, and the boxes' signed downloads of binaries and patches.
 */
export function releaseRoutes(releases: ReleaseService, rollouts: RolloutService, devices: DeviceService): Route[] {
  const download = async (req: Parameters<Route['handle']>[0]['req'], sha256: string, from?: string) => {
    const device = await devices.authenticate(req, '');
    if (!SHA256.test(sha256) || (from !== undefined && !SHA256.test(from))) throw notFound('release');
    const d = await releases.download(device.tenantId, sha256, from, req.headers.range);
    return {
      status: 206,
      bytes: d.bytes,
      headers: {
        'content-type': 'application/octet-stream',
        'content-range': `bytes ${d.start}-${d.end}/${d.size}`,
        'accept-ranges': 'bytes',
        'cache-control': 'private, max-age=31536000, immutable',
      },
    };
  };
  return [
    route({
      method: 'post',
      path: `${BASE}/releases`,
      auth: 'write',
      body: 'json',
      schema: { body: SignedRelease },
      doc: {
        operationId: 'registerRelease',
        summary: 'Register a signed release file (`<binary>.release.json`); its bytes follow with PUT .../binary',
        responses: {
          201: { description: 'registered; `id` is `<version>/<arch>`', schema: AnObject('the release') },
          200: {
            description: 'the same file was registered already: the release as it is',
            schema: AnObject('the release'),
          },
        },
      },
      async handle({ principal, valid }) {
        const { created, release } = await releases.create(principal.tenantId, principal.userId, valid());
        return json(created ? 201 : 200, release);
      },
    }),
    {
      method: 'put',
      path: `${BASE}/releases/:version/:arch/binary`,
      auth: 'write',
      body: 'raw',
      schema: {
        body: Type.String({
          contentEncoding: 'binary',
          description: `a piece of the binary, at most ${MAX_REQUEST_BYTES} bytes`,
        }),
      },
      doc: {
        operationId: 'uploadReleaseBinary',
        summary: "A piece of a release's binary, from the bytes the central has (resumable)",
        params: { version: 'the release version', arch: 'x64 or arm64' },
        requestType: 'application/octet-stream',
        headers: [
          {
            name: 'Content-Range',
            required: true,
            description: '`bytes A-B/TOTAL`: A the bytes received so far, TOTAL the manifest size',
          },
        ],
        responses: {
          200: {
            description: '`received` bytes stored; `state` ready after the last, whose sha256 and size were checked',
            schema: AnObject('the release'),
          },
          409: {
            description: 'A is not the bytes received: `args[0]` and `Upload-Offset` name them; resume from there',
            headers: ['Upload-Offset'],
          },
          422: { description: "the bytes are not the manifest's (`releaseMismatch`): the upload is discarded" },
        },
      },
      async handle({ req, principal, body }) {
        const { version, arch } = releaseId(req.params);
        const range = parseContentRange(req.headers['content-range']);
        if (typeof range === 'string') throw invalidField('Content-Range', range);
        return json(200, await releases.append(principal.tenantId, version, arch, range, body as Buffer));
      },
    },
    {
      method: 'get',
      path: `${BASE}/releases`,
      auth: 'bearer',
      body: 'none',
      doc: {
        operationId: 'listReleases',
        summary: "The tenant's releases, their patches, and the devices running each or reporting on it",
        responses: ok('the releases', Type.Array(AnObject('a release'))),
      },
      handle: async ({ principal }) =>
        json(
          200,
          (await releases.list(principal.tenantId)).map(({ tenant: _tenant, ...r }) => r),
        ),
    },
    {
      method: 'get',
      path: `${BASE}/releases/:version/:arch`,
      auth: 'bearer',
      body: 'none',
      doc: {
        operationId: 'getRelease',
        summary: 'One release, with the bytes received so far',
        params: { version: 'the release version', arch: 'x64 or arm64' },
        responses: ok('the release'),
      },
      async handle({ req, principal }) {
        const { version, arch } = releaseId(req.params);
        return json(200, await releases.get(principal.tenantId, version, arch));
      },
    },
    route({
      method: 'post',
      path: `${BASE}/rollouts`,
      auth: 'write',
      body: 'json',
      schema: { body: RolloutBody },
      doc: {
        operationId: 'startRollout',
        summary: 'Start a rollout of a version; it supersedes the current one',
        responses: { 201: { description: 'the rollout', schema: AnObject('the rollout') } },
      },
      handle: async ({ principal, valid }) =>
        json(201, await rollouts.create(principal.tenantId, principal.userId, valid())),
    }),
    {
      method: 'get',
      path: `${BASE}/rollouts`,
      auth: 'bearer',
      body: 'none',
      doc: {
        operationId: 'listRollouts',
        summary: "The tenant's rollouts, newest first",
        responses: ok('the rollouts', Type.Array(AnObject('a rollout'))),
      },
      handle: async ({ principal }) => json(200, await rollouts.list(principal.tenantId)),
    },
    {
      method: 'get',
      path: `${BASE}/rollouts/:id`,
      auth: 'bearer',
      body: 'none',
      doc: {
        operationId: 'getRollout',
        summary: 'A rollout with its selected devices counted by update state (and pending)',
        params: { id: 'the rollout id' },
        responses: ok('the rollout and its counts'),
      },
      handle: async ({ req, principal }) => json(200, await rollouts.get(principal.tenantId, req.params.id!)),
    },
    route({
      method: 'post',
      path: `${BASE}/rollouts/:id/halt`,
      auth: 'write',
      body: 'optional-json',
      schema: { body: HaltBody },
      doc: {
        operationId: 'haltRollout',
        summary: 'Halt a rollout: devices that have not installed it get no target',
        params: { id: 'the rollout id' },
        responses: ok('the rollout'),
      },
      handle: async ({ req, principal, body, valid }) =>
        json(
          200,
          await rollouts.halt(principal.tenantId, req.params.id!, body === undefined ? undefined : valid().reason),
        ),
    }),
    {
      method: 'post',
      path: `${BASE}/rollouts/:id/resume`,
      auth: 'write',
      body: 'none',
      doc: {
        operationId: 'resumeRollout',
        summary: 'Resume a halted rollout; the rollbacks seen so far no longer count towards a halt',
        params: { id: 'the rollout id' },
        responses: ok('the rollout'),
      },
      handle: async ({ req, principal }) => json(200, await rollouts.resume(principal.tenantId, req.params.id!)),
    },
    {
      method: 'get',
      path: RELEASE_PATHS.binary(':sha256'),
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'downloadReleaseBinary',
        summary: "A release's binary for a box (signed; one Range of at most 8 MiB)",
        tag: 'sync-api',
        params: { sha256: "the binary's sha256" },
        headers: DOWNLOAD_HEADERS,
        responses: BYTES,
      },
      handle: ({ req }) => download(req, req.params.sha256!),
    },
    {
      method: 'get',
      path: RELEASE_PATHS.patch(':sha256', ':from'),
      auth: 'none',
      body: 'none',
      doc: {
        operationId: 'downloadReleasePatch',
        summary: 'A zstd patch to a release from an older binary, for a box (signed; one Range of at most 8 MiB)',
        tag: 'sync-api',
        params: { sha256: "the release's sha256", from: "the sha256 of the box's binary" },
        headers: DOWNLOAD_HEADERS,
        responses: BYTES,
      },
      handle: ({ req }) => download(req, req.params.sha256!, req.params.from!),
    },
  ];
}
