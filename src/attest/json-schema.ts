/**
 * @module
 * The JSON Schema of receipt evidence files (docs/schemas/receipt.schema.json),
 * generated from `ReceiptSchema` so the published document cannot drift from what
 * the verifier accepts; a test compares the file with this output.
 */
import { z } from 'zod';
import { PATH_TYPE, ReceiptSchema } from './receipt.js';

const DESCRIPTIONS: Record<string, string> = {
  v: 'Format version (1).',
  type: '"output" for a release record; "edge" for a dag receipt with a parent (the edge manifest the parent co-signs).',
  output_sha256: 'SHA-256 of the exact output bytes released, lower-case hex.',
  output_len: 'Length of the output in bytes.',
  deployer: 'Organisation whose runtime released the output; must own key_id in the verifier directory.',
  instance: 'Agent instance id (a label).',
  key_id: 'Key that signed the release: "ed25519:" + first 16 hex of SHA-256 of the raw public key.',
  issued_at: 'Release time, UTC with milliseconds, exactly as Date.prototype.toISOString writes it.',
  not_after: 'End of validity (exclusive); later than issued_at.',
  nonce:
    'At least 128 random bits, unpadded base64url with zero padding bits; consumed once by verifiers sharing a nonce store.',
  parent: 'SHA-256 (hex) of the RFC 8785 form of the whole parent receipt, signatures included; null at the root.',
  depth: 'Position on the path: 0 at the root, parent depth + 1 otherwise.',
  construction: 'Ancestry construction: none (no parent), chain, merkle or dag.',
  cosigners: 'dag edges: deployers that must co-sign the edge (always including the parent deployer); empty otherwise.',
  ancestry_root: 'merkle only: RFC 6962 tree head over the digests of all ancestors, root first.',
  signatures:
    'Ed25519 signatures over the domain tag ("witness/receipt/v1\\u0000" or "witness/edge/v1\\u0000") followed by the RFC 8785 form of the receipt without signatures.',
};

/** The JSON Schema document for an evidence file: one receipt, or {"type": "witness/path", "path": [root, …, leaf]}. */
export function receiptJsonSchema(): Record<string, unknown> {
  const receipt = z.toJSONSchema(ReceiptSchema) as {
    properties: Record<string, Record<string, unknown>>;
    $schema?: string;
  };
  delete receipt.$schema;
  for (const [name, text] of Object.entries(DESCRIPTIONS)) {
    const property = receipt.properties[name];
    if (property) property.description = text;
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://agent-witness.dev/schemas/receipt.schema.json',
    title: 'Witness receipt evidence',
    description:
      'A release receipt (attest.md §2), or an ancestry path of receipts root → leaf. Verifiers also require: real calendar times, issued_at < not_after, no deployer or key_id listed twice, canonical base64url, and no duplicate keys in the JSON text.',
    oneOf: [
      { $ref: '#/$defs/receipt' },
      {
        type: 'object',
        properties: {
          type: {
            const: PATH_TYPE,
            description: 'Declares a delegation path; files written before paths declared their type lack it.',
          },
          path: {
            type: 'array',
            minItems: 1,
            items: { $ref: '#/$defs/receipt' },
            description: 'Receipts from the root (depth 0) to the leaf.',
          },
        },
        required: ['path'],
        additionalProperties: false,
      },
    ],
    $defs: { receipt },
  };
}
