import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { simJsonSchemas } from '../../src/sim/experiment/json-schemas.js';
import { RunRecordSchema } from '../../src/sim/experiment/record-schema.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';

describe('documented JSON Schemas', () => {
  for (const [name, schema] of Object.entries(simJsonSchemas())) {
    it(`docs/schemas/${name} matches the code (regenerate with npm run schemas)`, () => {
      const committed = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'schemas', name), 'utf8'));
      expect(committed).toEqual(JSON.parse(JSON.stringify(schema)));
    });
  }
  it('every results line the simulator writes passes the documented schema', async () => {
    const experiment = parseExperiment({ runs: 3, grid: { honest: [2, 4], byzantine: [0, 2], byzantineStrategy: ['abstain', 'random'], rounds: 5 } });
    const { records } = await runExperiment({ experiment });
    for (const record of records) expect(RunRecordSchema.safeParse(JSON.parse(JSON.stringify(record))).success).toBe(true);
  });
});
