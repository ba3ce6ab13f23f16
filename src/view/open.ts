/**
 * @module
 * What `witness view PATH` was given, recognised as `witness verify` recognises it —
 * by the type a document declares, never by searching its text: a mailbox folder (its
 * mailbox.json; a PostgreSQL mailbox's folder too), a release receipt, delegation path,
 * DSSE envelope or evidence bundle, an E12 results file, or else results files. Then
 * each non-results artifact becomes the answers its pages ask for.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isE12Results } from '../a2a/e12-verify.js';
import { IN_TOTO_PAYLOAD_TYPE, verifyDsse } from '../attest/dsse.js';
import { BUNDLE_TYPE, verifyBundle } from '../attest/evidence.js';
import { readNamedFile } from '../attest/files.js';
import type { KeyDirectory } from '../attest/key-directory.js';
import { PATH_TYPE } from '../attest/receipt.js';
import { verifyEvidence } from '../attest/verify.js';
import { WitnessError } from '../core/errors.js';
import { parseStrictJson } from '../core/strict-json.js';
import { attestationGraph } from './attest-model.js';
import { apiKey } from './page.js';

/** What a path holds, for the viewer. */
export type Viewed =
  | { kind: 'mailbox'; dir: string }
  | { kind: 'evidence'; value: unknown; carriesOutput: boolean; dsse: boolean }
  | { kind: 'e12'; value: unknown }
  | { kind: 'results' };

/** A JSON document larger than this is not evidence (a receipt path is kilobytes; an E12 file of 90 trials ~1 MB). */
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;
const RECEIPT_TYPES = ['output', 'edge', PATH_TYPE];

export function recogniseViewed(path: string): Viewed {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch {
    throw new WitnessError(
      'NOT_FOUND',
      `${path} does not exist; give results files, a mailbox folder, an evidence file or an E12 results file.`,
    );
  }
  if (stat.isDirectory()) {
    if (existsSync(join(path, 'mailbox.json'))) return { kind: 'mailbox', dir: path };
    throw new WitnessError(
      'USAGE',
      `${path} is a folder but not a mailbox (it has no mailbox.json); give a mailbox folder (\`witness mailbox init\`) or a file.`,
    );
  }
  const value = _document(path, stat.size);
  if (value === undefined) return { kind: 'results' };
  if (isE12Results(value)) return { kind: 'e12', value };
  const v = value as Record<string, unknown>;
  const legacyPath = Object.keys(v).length === 1 && Array.isArray(v.path);
  if (RECEIPT_TYPES.includes(v.type as string) || legacyPath)
    return { kind: 'evidence', value, carriesOutput: false, dsse: false };
  if (v.type === BUNDLE_TYPE) return { kind: 'evidence', value, carriesOutput: true, dsse: false };
  if (v.payloadType === IN_TOTO_PAYLOAD_TYPE) return { kind: 'evidence', value, carriesOutput: false, dsse: true };
  return { kind: 'results' };
}

/** The first line's object (JSONL, or a document on one line), else the whole document's; undefined when neither is a JSON object. */
function _document(path: string, size: number): Record<string, unknown> | undefined {
  const head = _head(path, 64 * 1024);
  if (!head.trimStart().startsWith('{')) return undefined;
  const nl = head.indexOf('\n');
  const first = nl >= 0 ? _parse(head.slice(0, nl)) : undefined;
  if (first) return first;
  // A document over several lines (or one line longer than the head): read whole, if it can be one.
  if (size > MAX_DOCUMENT_BYTES) return undefined;
  return _parse(readNamedFile(path, 'file').toString('utf8'));
}

function _parse(text: string): Record<string, unknown> | undefined {
  try {
    const value = parseStrictJson(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function _head(path: string, bytes: number): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const n = readSync(fd, buffer, 0, bytes, 0);
    return buffer.toString('utf8', 0, n);
  } finally {
    closeSync(fd);
  }
}

export interface EvidenceViewOptions {
  directory: KeyDirectory;
  /** The output bytes a receipt, path or envelope claims (a bundle carries its own). */
  output?: Uint8Array;
  now?: number;
}

/** The answers of an evidence file's page: its graph, verified by attest's verifier as `witness verify` does (no nonce store: nothing is consumed). */
export async function evidenceAnswers(
  viewed: Extract<Viewed, { kind: 'evidence' }>,
  name: string,
  options: EvidenceViewOptions,
): Promise<Record<string, unknown>> {
  const verifyOptions = { directory: options.directory, now: options.now ?? Date.now() };
  const output = options.output ?? new Uint8Array(0);
  const result = viewed.carriesOutput
    ? await verifyBundle(viewed.value, verifyOptions)
    : viewed.dsse
      ? await verifyDsse(viewed.value, output, verifyOptions)
      : await verifyEvidence(viewed.value, output, verifyOptions);
  return {
    [apiKey('about', {})]: { kind: 'attest', file: name },
    [apiKey('graph', { of: 'artifact' })]: {
      title: `Delegation path: ${name}`,
      ...attestationGraph(result, options.directory),
    },
  };
}
