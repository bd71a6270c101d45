import pkg from '../../../package.json';
import { MIGRATIONS } from '../../db/migrate.js';
import type { Program } from './agent.js';

/** This program, as a release manifest describes it (src/shared/release.ts). */
export const thisProgram = (): Program => ({
  version: pkg.version,
  arch: process.arch,
  node: process.versions.node,
  schema: MIGRATIONS[MIGRATIONS.length - 1]!.version,
  execPath: process.execPath,
});
