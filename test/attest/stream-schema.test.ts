/**
 * docs/schemas/stream-recording.schema.json is what `npm run schemas` generates from the
 * verifier's own zod schemas, and every line the recorder writes for a real stream —
 * header, chunks, checkpoints, the final receipt with a delegation path — matches it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { newSigningKey } from '../../src/attest/index.js';
import { streamRecordingJsonSchema } from '../../src/attest/stream/json-schema.js';
import { NOW, signerAt } from './helpers.js';
import { recordedStream } from './stream-helpers.js';

const SCHEMAS = join(import.meta.dirname, '..', '..', 'docs', 'schemas');
const read = (name: string) => readFileSync(join(SCHEMAS, name), 'utf8');

describe('docs/schemas/stream-recording.schema.json', () => {
  it('is exactly the schema generated from the verifier’s schemas (npm run schemas after a format change)', () => {
    expect(read('stream-recording.schema.json')).toBe(`${JSON.stringify(streamRecordingJsonSchema(), null, 2)}\n`);
  });
  it('matches every line of a recorded stream, and refuses a chunk line with a member it does not know', async () => {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    ajv.addSchema(JSON.parse(read('receipt.schema.json')) as object);
    const validate = ajv.compile(JSON.parse(read('stream-recording.schema.json')) as object);
    const parentKey = newSigningKey('org-parent');
    const task = await signerAt(parentKey, NOW).releaseOutput(Buffer.from('write the report'));
    const lines = await recordedStream(newSigningKey('org-child'), 20, { checkpointEvery: 4, ancestors: [task] });
    expect(new Set(lines.map((l) => (l as { type: string }).type))).toEqual(
      new Set(['witness/stream', 'chunk', 'checkpoint', 'final']),
    );
    for (const line of lines) expect(validate(line) ? [] : validate.errors, JSON.stringify(line)).toEqual([]);
    expect(validate({ ...(lines[1] as object), extra: true })).toBe(false);
  });
});
