/**
 * A child process for the crash test of `writeFileAtomic`: rewrites FILE forever with
 * version 1, 2, 3, … (each a header line and MiB of one repeated byte) and prints
 * each version's number once it is written. The test kills it with SIGKILL mid-way.
 * Usage: node --import tsx test/core/support/atomic-writer.ts FILE
 */
import { writeFileAtomic } from '../../../src/core/atomic-write.js';

export const FILL_BYTES = 4 * 1024 * 1024;

/** The whole content of version `n`: what a reader must see entirely, or not at all. */
export function versionContent(n: number): Buffer {
  const header = Buffer.from(`version ${n}\n`);
  return Buffer.concat([header, Buffer.alloc(FILL_BYTES, 0x61 + (n % 26))]);
}

const file = process.argv[2];
if (file && process.argv[1]?.endsWith('atomic-writer.ts')) {
  for (let n = 1; ; n++) {
    writeFileAtomic(file, versionContent(n), { syncFolder: false });
    process.stdout.write(`${n}\n`);
  }
}
