/**
 * @module
 * What every command gets: where to print, and where to leave its exit status
 * (0 success; 1 the work failed or found a failure; 2 wrong usage — thrown as a
 * `WitnessError` with code USAGE or INVALID_INPUT instead of set here).
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { checkOutputFile } from '../core/atomic-write.js';
import { WitnessError } from '../core/errors.js';
import type { CliIo } from './io.js';

export interface CliContext {
  readonly io: CliIo;
  exitCode: number;
}

/** A path argument resolved against the CLI's working directory. */
export function resolvePath(ctx: CliContext, path: string): string {
  return resolve(ctx.io.cwd, path);
}

/** `--out` must name a file in an existing folder, checked before the work: a directory or a missing folder is a usage error. */
export function checkOutPath(path: string): void {
  checkOutputFile(path);
  const folder = dirname(path);
  if (!existsSync(folder) || !statSync(folder).isDirectory())
    throw new WitnessError('NOT_FOUND', `--out ${path}: the folder ${folder} does not exist.`);
}
