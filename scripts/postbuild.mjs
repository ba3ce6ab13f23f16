// Makes the CLI entry executable after `tsc` (npm links it as `witness`).
import { chmodSync, existsSync } from 'node:fs';

const bin = 'dist/cli/main.js';
if (existsSync(bin)) chmodSync(bin, 0o755);
