/**
 * Signed updates of the boxes' program (docs/sync.md "Releases and rollouts"). `releases`: headquarters' signed
 * release files, one per version and arch, their bytes arriving in pieces (`received`) until `ready`.
 * `release_chunks`: the bytes of binaries and patches in 1 MiB rows, so nothing ever holds a whole binary in
 * memory; `blob` is the binary's sha256, or `<to sha256>.<from sha256>` for a patch. `release_patches`: zstd
 * patches from an older binary to a newer one. `rollouts`: which devices should run which version; at most one
 * rollout of a tenant is not superseded. `devices.program_version`, `update_report`: what a box said in its last hello.
 */
export const sql = `
CREATE TABLE releases (
  tenant_id text NOT NULL REFERENCES tenants,
  version text NOT NULL,
  arch text NOT NULL CHECK (arch IN ('x64', 'arm64')),
  signed jsonb NOT NULL,
  sha256 text NOT NULL,
  size bigint NOT NULL CHECK (size > 0),
  state text NOT NULL DEFAULT 'uploading' CHECK (state IN ('uploading', 'ready')),
  received bigint NOT NULL DEFAULT 0 CHECK (received >= 0 AND received <= size),
  uploaded_by text NOT NULL,
  uploaded_at timestamptz NOT NULL DEFAULT now(),
  ready_at timestamptz,
  patched_at timestamptz,
  PRIMARY KEY (tenant_id, version, arch),
  UNIQUE (tenant_id, sha256)
);

CREATE TABLE release_chunks (
  tenant_id text NOT NULL REFERENCES tenants,
  blob text NOT NULL,
  idx integer NOT NULL CHECK (idx >= 0),
  data bytea NOT NULL,
  PRIMARY KEY (tenant_id, blob, idx)
);

CREATE TABLE release_patches (
  tenant_id text NOT NULL REFERENCES tenants,
  to_sha256 text NOT NULL,
  from_sha256 text NOT NULL,
  size bigint NOT NULL CHECK (size > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, to_sha256, from_sha256),
  FOREIGN KEY (tenant_id, to_sha256) REFERENCES releases (tenant_id, sha256) ON DELETE CASCADE
);

CREATE TABLE rollouts (
  tenant_id text NOT NULL REFERENCES tenants,
  rollout_id text NOT NULL,
  version text NOT NULL,
  selection jsonb NOT NULL,
  starts_at timestamptz NOT NULL,
  install_window jsonb NOT NULL,
  stages jsonb NOT NULL,
  stage_minutes integer NOT NULL CHECK (stage_minutes >= 0),
  halt_share double precision NOT NULL CHECK (halt_share >= 0 AND halt_share <= 1),
  stage integer NOT NULL DEFAULT 0,
  stage_started_at timestamptz NOT NULL,
  state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'halted', 'superseded')),
  halt_reason text,
  -- Devices whose rollback headquarters saw when it resumed the rollout: they no longer count towards a halt.
  forgiven jsonb NOT NULL DEFAULT '[]',
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  changed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, rollout_id)
);
-- The tenant's current rollout: the long poll looks it up for every answer.
CREATE UNIQUE INDEX rollouts_current ON rollouts (tenant_id) WHERE state <> 'superseded';

ALTER TABLE devices ADD COLUMN program_version text, ADD COLUMN update_report jsonb, ADD COLUMN update_at timestamptz;
`;
