/** @module The package version, read once from package.json (the CLI's --version, the engine named in signed transcripts). */
import { readFileSync } from 'node:fs';

const _pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};
export const VERSION: string = _pkg.version;
/** Name and version of this engine, e.g. `agent-witness@0.1.0`. */
export const ENGINE = `${_pkg.name}@${_pkg.version}`;
