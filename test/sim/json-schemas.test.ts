import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newSigningKey } from '../../src/attest/keys.js';
import { CheckpointsFileSchema, checkpointPath } from '../../src/sim/transcript/format.js';
import { describe, expect, it } from 'vitest';
import { simJsonSchemas } from '../../src/sim/experiment/json-schemas.js';
import { RunRecordSchema } from '../../src/sim/experiment/record-schema.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';

describe('documented JSON Schemas', () => {
  for (const [name, schema] of Object.entries(simJsonSchemas())) {
    it(`docs/schemas/${name} matches the code (regenerate with npm run schemas)`, () => {
      const committed = JSON.parse(
        readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'schemas', name), 'utf8'),
      );
      expect(committed).toEqual(JSON.parse(JSON.stringify(schema)));
    });
  }
  it('every results line the simulator writes passes the documented schema', async () => {
    const experiment = parseExperiment({
      runs: 3,
      grid: { honest: [2, 4], byzantine: [0, 2], byzantineStrategy: ['abstain', 'random'], rounds: 5 },
    });
    const { records } = await runExperiment({ experiment });
    for (const record of records)
      expect(RunRecordSchema.safeParse(JSON.parse(JSON.stringify(record))).success).toBe(true);
  });
  it('every line of a signed results file, and its checkpoint file, pass the documented schemas', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'witness-schema-')), 'r.jsonl');
    await runExperiment({
      experiment: parseExperiment({ runs: 2, grid: { honest: [2, 3] } }),
      out,
      sign: { key: newSigningKey('lab'), lineSignatures: true },
    });
    for (const line of readFileSync(out, 'utf8').split('\n').filter(Boolean))
      expect(RunRecordSchema.strict().safeParse(JSON.parse(line)).success).toBe(true);
    expect(CheckpointsFileSchema.safeParse(JSON.parse(readFileSync(checkpointPath(out), 'utf8'))).success).toBe(true);
  });
});
