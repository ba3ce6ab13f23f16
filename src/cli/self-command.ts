/**
 * @module
 * How the CLI starts another copy of itself (mailbox servers written into runtime
 * configs, the probe's servers), and how a user overrides that.
 */
import { realpathSync } from 'node:fs';
import { WitnessError } from '../core/errors.js';

/**
 * This very witness: node, its loader flags (tsx when run from source) and the entry
 * script, resolved through the `witness` bin symlink; plain `witness` when unknown.
 */
export function selfCommand(): string[] {
  try {
    const script = realpathSync(process.argv[1] ?? '');
    if (/[/\\]cli[/\\]main\.(js|ts|mjs)$/.test(script) || /witness\.mjs$/.test(script))
      return [process.execPath, ...process.execArgv, script];
  } catch {
    // not started from a script: fall back to PATH
  }
  return ['witness'];
}

/** Parses `--server-command`: a JSON array of non-empty strings. */
export function parseCommandArray(json: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((s) => typeof s === 'string' && s !== '')) {
    throw new WitnessError(
      'USAGE',
      `--server-command must be a JSON array of strings, e.g. '["node","/opt/witness/dist/cli/main.js"]'; got ${json}.`,
    );
  }
  return parsed as string[];
}
