/**
 * The runtime matrix, signed: a receipt over the JSON's exact bytes (attest's one
 * signer) that `witness verify --output --keys` accepts, and that fails — exit 1,
 * OUTPUT_MISMATCH — for any one byte changed, wherever it is (property). The matrix
 * committed in docs/ verifies too, and says what the runtimes negotiated and pushed.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyDirectory, newSigningKey, parseDirectory, verifyEvidence } from '../../src/attest/index.js';
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';
import { rowOf, skippedRow } from '../../src/probe/all.js';
import {
  type Matrix,
  MATRIX_DEPLOYER,
  MATRIX_FORMAT,
  matrixBytes,
  matrixOf,
  runProbe,
  signMatrix,
} from '../../src/probe/index.js';
import { witnessBundle } from '../support/witness-bundle.js';

const DOCS = resolve(import.meta.dirname, '../../docs');

async function verify(dir: string, json = 'runtimes.json'): Promise<{ code: number; out: string }> {
  const io = memoryIo();
  const code = await runMain(
    [
      'verify',
      join(dir, 'runtimes.receipt.json'),
      '--output',
      join(dir, json),
      '--keys',
      join(dir, 'runtimes.keys.json'),
    ],
    io,
  );
  return { code, out: io.out + io.err };
}

describe('the signed matrix', () => {
  it('verifies with witness verify; a flipped byte in the JSON exits 1 with OUTPUT_MISMATCH', async () => {
    const report = await runProbe({ runtime: 'reference', serverCommand: await witnessBundle(), checks: ['send'] });
    const matrix = matrixOf(
      {
        format: 'witness-probe-all/1',
        started_at: report.started_at,
        ok: report.ok,
        rows: [rowOf(report)],
        skipped: [skippedRow('openhands')],
        reports: [report],
      },
      'none',
    );
    const bytes = matrixBytes(matrix);
    const { receipt, directory } = await signMatrix(bytes, newSigningKey(MATRIX_DEPLOYER));
    const dir = mkdtempSync(join(tmpdir(), 'witness-matrix-'));
    writeFileSync(join(dir, 'runtimes.json'), bytes);
    writeFileSync(join(dir, 'runtimes.receipt.json'), JSON.stringify(receipt));
    writeFileSync(join(dir, 'runtimes.keys.json'), JSON.stringify(directory));
    expect(await verify(dir)).toMatchObject({ code: 0 });
    const flipped = Buffer.from(bytes);
    const at = bytes.indexOf('"reference"') + 3;
    flipped[at] = flipped[at]! ^ 0x01;
    writeFileSync(join(dir, 'flipped.json'), flipped);
    const bad = await verify(dir, 'flipped.json');
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/OUTPUT_MISMATCH/);
    // OpenHands is not installable here: the matrix says so, and marks its built-ins as the known-table fallback.
    expect(matrix.skipped[0]).toMatchObject({
      runtime: 'openhands',
      reason: expect.stringMatching(/Python package.*not on npm/),
      known_builtins: { source: expect.stringMatching(/not checked against a running OpenHands CLI/) },
    });
  }, 120_000);

  it('any single byte changed anywhere in the JSON fails verification (property)', async () => {
    const bytes = Buffer.from(
      `${JSON.stringify({ format: MATRIX_FORMAT, rows: [{ runtime: 'x', seconds: 1.5 }] }, null, 2)}\n`,
    );
    const { receipt, directory } = await signMatrix(bytes, newSigningKey(MATRIX_DEPLOYER));
    const keys = new KeyDirectory(parseDirectory(directory));
    expect((await verifyEvidence(receipt, bytes, { directory: keys })).ok).toBe(true);
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), async (i, x) => {
        const changed = Buffer.from(bytes);
        changed[i] = changed[i]! ^ x;
        const result = await verifyEvidence(receipt, changed, { directory: keys });
        expect(result.ok).toBe(false);
        expect(result.reasons.map((r) => r.code)).toContain('OUTPUT_MISMATCH');
      }),
      { numRuns: 200 },
    );
  });

  it('the matrix in docs/ verifies, with the protocol and push columns filled for every runtime run', async () => {
    expect(await verify(DOCS)).toMatchObject({ code: 0 });
    const matrix = JSON.parse(readFileSync(join(DOCS, 'runtimes.json'), 'utf8')) as Matrix;
    expect(matrix.format).toBe(MATRIX_FORMAT);
    for (const row of matrix.rows) {
      expect(row.protocol?.length, row.runtime).toBeGreaterThan(0);
      expect(Object.keys(row.push ?? {}), row.runtime).toEqual(['resource', 'channel']);
    }
    expect(readFileSync(join(DOCS, 'runtimes.md'), 'utf8')).toContain(
      'witness verify docs/runtimes.receipt.json --output docs/runtimes.json --keys docs/runtimes.keys.json',
    );
  });
});
