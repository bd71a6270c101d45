// Which architecture an executable or addon is for, and how this machine runs one of another architecture (under
// qemu user emulation): src/shared/executable-arch.ts, which `venue-box release sign` uses too. Re-exported here for
// build.sh, scripts/build-sea.mjs, scripts/bench-binary.mjs and test/binary-arm64.test.ts.
export { binaryArch, emulatorFor } from '../../src/shared/executable-arch.ts';
