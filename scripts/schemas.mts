// Writes docs/schemas/*.schema.json from the zod schemas in the code (npm run schemas).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { delegationRecordJsonSchema } from '../src/a2a/delegation-record.js';
import { receiptJsonSchema } from '../src/attest/json-schema.js';
import { streamRecordingJsonSchema } from '../src/attest/stream/json-schema.js';
import { simJsonSchemas } from '../src/sim/experiment/json-schemas.js';

const dir = join(import.meta.dirname, '..', 'docs', 'schemas');
mkdirSync(dir, { recursive: true });
const schemas = {
  ...simJsonSchemas(),
  'a2a-delegation.schema.json': delegationRecordJsonSchema(),
  'receipt.schema.json': receiptJsonSchema(),
  'stream-recording.schema.json': streamRecordingJsonSchema(),
};
for (const [name, schema] of Object.entries(schemas)) {
  writeFileSync(join(dir, name), `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote docs/schemas/${name}`);
}
