/**
 * The schemas of releases (docs/operations.md "Updating boxes"): the signed manifest, the key rotations, the target a
 * central offers a box and the update state a box reports in its hello. Apart from src/shared/release.ts (which signs
 * and verifies, with Node's crypto) so the headquarters console (web/hq/) can name these types too.
 */
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

export const ARCHS = ['x64', 'arm64'] as const;
export type Arch = (typeof ARCHS)[number];

export const SHA256_PATTERN = '^[0-9a-f]{64}$';
/** An Ed25519 public key's 32 bytes in base64: a release key as `update.releaseKeys` and the key files hold it. */
export const PUBLIC_KEY_PATTERN = '^[A-Za-z0-9+/]{43}=$';
/** RFC 3339's date-time, as `toISOString()` writes it (an offset and any fraction allowed). */
export const DATE_TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$';
const Sha256 = Type.String({ pattern: SHA256_PATTERN, description: 'sha256, 64 lower-case hex digits' });
const PublicKey = Type.String({
  pattern: PUBLIC_KEY_PATTERN,
  description: 'an Ed25519 public key: its 32 bytes, base64',
});
const Arch = Type.Union(ARCHS.map((a) => Type.Literal(a)));
const Signature = Type.String({ pattern: '^[A-Za-z0-9+/]{86}==$', description: 'an Ed25519 signature, base64' });
/** `MAJOR.MINOR.PATCH` with an optional pre-release (`-rc.1`); build metadata is not allowed. */
export const Version = Type.String({
  pattern: '^(0|[1-9]\\d{0,8})\\.(0|[1-9]\\d{0,8})\\.(0|[1-9]\\d{0,8})(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$',
  maxLength: 64,
  description: 'semantic version, MAJOR.MINOR.PATCH[-PRE]',
});

/** What a release is; its exact JSON text is what the release key signs. */
export const ReleaseManifest = Type.Object(
  {
    format: Type.Literal(1),
    version: Version,
    arch: Arch,
    sha256: Sha256,
    size: Type.Integer({ minimum: 1, maximum: 1024 * 1024 * 1024, description: "the binary's size in bytes" }),
    node: Type.String({ pattern: '^\\d+\\.\\d+\\.\\d+$', description: 'the Node version inside the binary' }),
    schema: Type.Object(
      {
        box: Type.Integer({
          minimum: 1,
          maximum: 1_000_000,
          description: "the box database's schema version the release migrates to; it opens none newer",
        }),
      },
      { additionalProperties: false },
    ),
    notes: Type.String({ maxLength: 4000 }),
    createdAt: Type.String({ pattern: DATE_TIME_PATTERN, description: 'when it was signed (RFC 3339)' }),
    rollback: Type.Boolean({
      description: 'headquarters allows boxes on a newer version to install this one (a forced rollback)',
    }),
  },
  { additionalProperties: false },
);
export type ReleaseManifest = Static<typeof ReleaseManifest>;

/** A new release key, vouched for by the key before it (`venue-box release rotate`). */
export const KeyRotation = Type.Object(
  {
    publicKey: PublicKey,
    signedBy: PublicKey,
    signature: Signature,
  },
  { additionalProperties: false },
);
export type KeyRotation = Static<typeof KeyRotation>;

/** The file `venue-box release sign` writes beside the binary (`<binary>.release.json`). */
export const SignedRelease = Type.Object(
  {
    manifest: Type.String({ maxLength: 8192, description: "the manifest's JSON text: the signed bytes" }),
    publicKey: PublicKey,
    signature: Signature,
    /** The rotations from older keys to `publicKey`, oldest first; empty when it is an original key. */
    keys: Type.Array(KeyRotation, { maxItems: 32 }),
  },
  { additionalProperties: false },
);
export type SignedRelease = Static<typeof SignedRelease>;

/** When a box may install: its venues' closed hours (from the catalogue), or a daily window in local time. */
export const InstallWindow = Type.Union([
  Type.Literal('closed'),
  Type.Object(
    {
      from: Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' }),
      to: Type.String({ pattern: '^([01]\\d|2[0-4]):[0-5]\\d$', description: '24:00 is the end of the day' }),
    },
    { additionalProperties: false },
  ),
]);
export type InstallWindow = Static<typeof InstallWindow>;

/** A binary patch (zstd `--patch-from`) from one binary to the release's. */
const ReleasePath = Type.String({
  pattern: '^/sync-api/api/releases/[0-9a-f]{64}(/patches/[0-9a-f]{64})?$',
  description: 'RELEASE_PATHS: the box asks its own central for these, whatever this says',
});
export const ReleasePatch = Type.Object({
  from: Sha256,
  size: Type.Integer({ minimum: 1 }),
  url: ReleasePath,
});

/** What the central's catalogue long poll tells a box to run (`release` in the answer; null: stay). */
export const ReleaseTarget = Type.Object({
  rollout: Type.String({ minLength: 1, maxLength: 64 }),
  release: SignedRelease,
  /** The whole binary: signed GETs with `Range: bytes=A-B` (206). */
  url: ReleasePath,
  patches: Type.Array(ReleasePatch),
  window: InstallWindow,
});
export type ReleaseTarget = Static<typeof ReleaseTarget>;

/** A box's update states (docs/operations.md "Updating boxes"). */
export const UPDATE_STATES = [
  'idle',
  'downloading',
  'verified',
  'waiting',
  'installing',
  'healthy',
  'rolledBack',
  'refused',
] as const;
export type UpdateState = (typeof UPDATE_STATES)[number];

/** Why a release was refused or rolled back. */
export const UPDATE_REASONS = [
  'signature',
  'hash',
  'size',
  'arch',
  'older',
  'schema',
  'disk',
  'download',
  'exited',
  'notReady',
  'gate',
  'crashLoop',
  'interrupted',
] as const;
export type UpdateReason = (typeof UPDATE_REASONS)[number];

/** The box's program and update state, in every hello. */
export const UpdateReport = Type.Object(
  {
    version: Version,
    arch: Arch,
    node: Type.String({ maxLength: 32 }),
    state: Type.Union(UPDATE_STATES.map((s) => Type.Literal(s))),
    /** The release the state is about (the target, or the one rolled back or refused). */
    target: Type.Optional(Version),
    rollout: Type.Optional(Type.String({ maxLength: 64 })),
    /** downloading: bytes so far and in all. */
    progress: Type.Optional(Type.Object({ bytes: Type.Integer({ minimum: 0 }), total: Type.Integer({ minimum: 0 }) })),
    reason: Type.Optional(Type.Union(UPDATE_REASONS.map((r) => Type.Literal(r)))),
    detail: Type.Optional(Type.String({ maxLength: 500 })),
    /** The box's clock when the state began, ms since the epoch. */
    since: Type.Number(),
  },
  { additionalProperties: false },
);
export type UpdateReport = Static<typeof UpdateReport>;

export const RELEASE_CHECKS = {
  manifest: TypeCompiler.Compile(ReleaseManifest),
  signed: TypeCompiler.Compile(SignedRelease),
  target: TypeCompiler.Compile(ReleaseTarget),
  report: TypeCompiler.Compile(UpdateReport),
};

/** Central paths a box downloads from (signed GETs). */
export const RELEASE_PATHS = {
  binary: (sha256: string) => `/sync-api/api/releases/${sha256}`,
  patch: (sha256: string, from: string) => `/sync-api/api/releases/${sha256}/patches/${from}`,
} as const;
