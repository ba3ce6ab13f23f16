/**
 * @module
 * The runtime matrix as a signed artifact: the JSON `npm run docs:runtimes` writes
 * (docs/runtimes.json), a release receipt over its exact bytes — attest's one signer
 * and receipt format, what `witness attest sign` makes — and a key directory pinning
 * the key that signed it, so that
 * `witness verify docs/runtimes.receipt.json --output docs/runtimes.json --keys docs/runtimes.keys.json`
 * checks that not one byte changed since the probe wrote it.
 */
import {
  addKey,
  createReleaseSigner,
  type DirectoryFile,
  emptyDirectory,
  MAX_TTL_MS,
  publicJwk,
  type Receipt,
  type SigningKey,
} from '../attest/index.js';
import type { AllReport, RuntimeRow, Skipped } from './all.js';
import type { ProbeReport } from './types.js';

export const MATRIX_FORMAT = 'witness-runtime-matrix/1';
/** The deployer name of a key made for one generation of the matrix. */
export const MATRIX_DEPLOYER = 'witness-runtime-matrix';

export interface Matrix {
  format: typeof MATRIX_FORMAT;
  generated_at: string;
  /** What answered as the model: the matrix's push "seen" column needs its request records. */
  model: string;
  rows: RuntimeRow[];
  skipped: Skipped[];
  /** Each runtime's full probe report: the evidence behind its row. */
  reports: ProbeReport[];
}

export function matrixOf(report: AllReport, model: string): Matrix {
  return {
    format: MATRIX_FORMAT,
    generated_at: report.started_at,
    model,
    rows: report.rows,
    skipped: report.skipped,
    reports: report.reports,
  };
}

/** The matrix's bytes as written: one JSON text, two-space indented, with a final newline (what the receipt signs). */
export function matrixBytes(matrix: Matrix): Buffer {
  return Buffer.from(`${JSON.stringify(matrix, null, 2)}\n`, 'utf8');
}

/**
 * Signs the bytes with `key`, valid for the longest lifetime a receipt holds: the
 * matrix is a dated record, read long after, and its date is in it. Returns the
 * receipt and a key directory trusting exactly that key from a minute before now.
 */
export async function signMatrix(
  bytes: Uint8Array,
  key: SigningKey,
  now = Date.now(),
): Promise<{ receipt: Receipt; directory: DirectoryFile }> {
  const signer = createReleaseSigner({ key, instance: 'npm run docs:runtimes', ttlMs: MAX_TTL_MS, clock: () => now });
  const receipt = await signer.releaseOutput(bytes);
  const directory = addKey(emptyDirectory(), publicJwk(key), {
    notBefore: now - 60_000,
    notAfter: Date.parse(receipt.not_after),
  });
  return { receipt, directory };
}
