/** @module The package version, read once from package.json. */
import { readFileSync } from 'node:fs';

const _pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
export const VERSION: string = _pkg.version;
