/**
 * @module
 * What every command gets: where to print, and where to leave its exit status
 * (0 success; 1 the work failed or found a failure; 2 wrong usage — thrown as a
 * `WitnessError` with code USAGE or INVALID_INPUT instead of set here).
 */
import { resolve } from 'node:path';
import type { CliIo } from './io.js';

export interface CliContext {
  readonly io: CliIo;
  exitCode: number;
}

/** A path argument resolved against the CLI's working directory. */
export function resolvePath(ctx: CliContext, path: string): string {
  return resolve(ctx.io.cwd, path);
}
