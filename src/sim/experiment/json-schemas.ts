/**
 * @module
 * JSON Schemas of the simulator's file formats, generated from the zod schemas the
 * code validates with, so the documents cannot drift from the code.
 */
import { z } from 'zod';
import { CheckpointsFileSchema } from '../transcript/format.js';
import { RunRecordSchema } from './record-schema.js';
import { ExperimentSchema } from './schema.js';

export function simJsonSchemas(): Record<string, unknown> {
  return {
    'results-line.schema.json': z.toJSONSchema(RunRecordSchema),
    'experiment.schema.json': z.toJSONSchema(ExperimentSchema, { io: 'input', unrepresentable: 'any' }),
    'results-checkpoint.schema.json': z.toJSONSchema(CheckpointsFileSchema, { unrepresentable: 'any' }),
  };
}
