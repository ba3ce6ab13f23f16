/**
 * @module
 * The JSON Schema of a recorded stream's lines (docs/schemas/stream-recording.schema.json,
 * written by `npm run schemas`), generated from the zod schemas the verifier reads with,
 * so the published document cannot drift from what it accepts; a test compares the file
 * with this output. The final line's evidence is a receipt or path: receipt.schema.json.
 */
import { z } from 'zod';
import { RecordedLineSchema, RecordingHeaderSchema } from './record.js';

type _Schema = { properties?: Record<string, Record<string, unknown>>; $schema?: string; oneOf?: _Schema[] };

/** One line of a recorded stream: the header (first line), or a chunk, checkpoint or final line. */
export function streamRecordingJsonSchema(): Record<string, unknown> {
  const header = z.toJSONSchema(RecordingHeaderSchema) as _Schema;
  const lines = z.toJSONSchema(RecordedLineSchema, { unrepresentable: 'any' }) as _Schema;
  delete header.$schema;
  const [chunk, checkpoint, final] = lines.oneOf as [_Schema, _Schema, _Schema];
  _describe(header, {
    type: 'Declares a recorded stream (what witness verify recognises); first line only.',
    session: 'The session (A2A context id) of the stream the client asked for.',
    task: 'The task whose stream was recorded.',
    artifact: 'The artifact whose stream was recorded.',
  });
  _describe(chunk, { bytes: 'The chunk bytes as received, standard base64 (RFC 4648 §4, padded).' });
  _describe(final, { statement: 'What the final release receipt signs: its RFC 8785 bytes are the output.' });
  (final.properties as Record<string, Record<string, unknown>>).evidence = {
    $ref: 'receipt.schema.json',
    description: 'The release receipt over the statement, or the delegation path ending in it.',
  };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://agent-witness.dev/schemas/stream-recording.schema.json',
    title: 'One line of a Witness recorded stream (JSON Lines)',
    description:
      'A recorded stream (docs/attest.md §10): the header first, then one line per event in the order received — a chunk with its receipt, a signed checkpoint, the final statement with its receipt. Verifiers also require: prev null exactly for chunk 0, strict JSON (no duplicate keys), and every line ending in a newline.',
    oneOf: [header, chunk, checkpoint, final],
  };
}

function _describe(schema: _Schema, descriptions: Record<string, string>): void {
  for (const [name, text] of Object.entries(descriptions)) {
    const property = schema.properties?.[name];
    if (property) property.description = text;
  }
}
