/**
 * @module
 * `verifyStream`: reassembles a recorded stream and says, with reason codes, whether
 * what the client was shown is exactly what the runtime released — every chunk, once,
 * in order, from this stream — under a final receipt that signs the whole. It never
 * says valid without that final receipt; a caller may ask for a partial verdict on a
 * stream cut short, which then says "partial" and vouches only for the chunks a
 * checkpoint proves.
 */
import { sha256Hex } from '../../core/hash.js';
import { MerkleTree } from '../../core/tlog/tree.js';
import type { Receipt } from '../receipt.js';
import { evidencePath } from '../receipt.js';
import { acceptPath, checkPath, type PathCheck, type VerifyOptions } from '../verify.js';
import { type Assembled, assemble } from './assemble.js';
import { checkHeads, readCheckpoints } from './checkpoints.js';
import {
  describeStream,
  type FinalStatement,
  finalStatementBytes,
  sameStream,
  type StreamPolicy,
  type StreamRef,
  streamOrigin,
} from './format.js';
import { boundStreamProblems, type StreamProblem, streamProblem } from './problems.js';
import { type RecordedEvent, readRecording } from './record.js';

export interface StreamVerifyOptions extends VerifyOptions {
  /** The policy the verifier requires the stream to have promised (POLICY_MISMATCH otherwise). */
  policy?: StreamPolicy;
  /** A stream cut before its final receipt gets the verdict "partial" (not "invalid") when nothing else is wrong. */
  partial?: boolean;
}

export interface StreamVerifyResult {
  /** True exactly when the verdict is valid. */
  ok: boolean;
  verdict: 'valid' | 'partial' | 'invalid';
  /** The stream the recording names. */
  stream?: StreamRef;
  policy?: string;
  /**
   * The chunks' bytes in sequence order: the whole stream when valid; the chunks a
   * checkpoint proves when partial; when invalid, what was received, for inspection only.
   */
  bytes: Buffer;
  /** Chunk events in the recording. */
  received: number;
  /** Chunks the final receipt signs (null without one). */
  size: number | null;
  /** Leading chunks a verified signature covers (the final receipt, else the largest matching checkpoint). */
  proven: number;
  /** Who signed the checkpoint that proves them, when no valid final receipt does. */
  provenBy?: { deployer: string; key_id: string };
  /** Checkpoints whose signature verified. */
  checkpoints: number;
  problems: StreamProblem[];
  /** The final receipt's delegation path, root first, when it parsed. */
  path?: Receipt[];
  signaturesChecked: number;
}

/**
 * Verifies a recorded stream (JSON Lines text, or its lines as values) against the
 * verifier's own key directory. The final receipt is checked as any receipt is (all of
 * `VerifyOptions`); its nonce is consumed only when the whole stream is valid.
 */
export async function verifyStream(
  recording: string | Uint8Array | readonly unknown[],
  options: StreamVerifyOptions,
): Promise<StreamVerifyResult> {
  const read = readRecording(recording);
  const problems = [...read.problems];
  const stream = read.header;
  const result = (extra: Partial<StreamVerifyResult>): StreamVerifyResult => ({
    ok: false,
    verdict: 'invalid',
    bytes: Buffer.alloc(0),
    received: read.events.filter((e) => e.type === 'chunk').length,
    size: null,
    proven: 0,
    checkpoints: 0,
    problems: boundStreamProblems(problems),
    signaturesChecked: 0,
    ...extra,
  });
  if (!stream) {
    if (!problems.some((p) => p.line === 1))
      problems.unshift(streamProblem('MALFORMED', 'The recording is empty: it names no stream.'));
    return result({});
  }
  const other = _otherStream(read.events, stream);
  if (other) {
    problems.push(
      streamProblem(
        'STREAM_MISMATCH',
        `The first line names ${describeStream(stream)}, but every chunk and final receipt here names ${describeStream(other)}: the first line, which nothing signs, was changed, or this is another stream's recording. None of it is the stream the first line names.`,
        { line: 1 },
      ),
    );
    return result({ stream });
  }
  const now = options.now === undefined ? Date.now() : new Date(options.now).getTime();
  const final = _final(read.events, stream, problems);
  if (final) _afterTheEnd(read.events, final, problems);
  const check = final ? _checkFinal(final, options, problems) : undefined;
  const chunks = read.events.flatMap((e) => (e.type === 'chunk' ? [e] : []));
  const policy = final?.statement.policy ?? chunks.find((c) => sameStream(c.receipt, stream))?.receipt.policy;
  if (options.policy !== undefined && policy !== undefined && policy !== options.policy)
    problems.push(
      streamProblem(
        'POLICY_MISMATCH',
        `The stream promised policy ${policy}; this verifier requires ${options.policy}.`,
      ),
    );
  const leaf = check?.leaf;
  const { heads, problems: checkpointProblems } = readCheckpoints(
    read.events.flatMap((e) => (e.type === 'checkpoint' ? [e] : [])),
    {
      origin: streamOrigin(stream),
      directory: options.directory,
      now,
      revocation: options.revocation ?? 'from-revoked-at',
      ...(leaf ? { releaser: { deployer: leaf.receipt.deployer, issuedAt: leaf.issuedAt } } : {}),
    },
  );
  const assembled = assemble({
    stream,
    chunks: chunks.map((c) => ({ receipt: c.receipt, bytes: c.bytes, line: c.line })),
    ...(final ? { statement: final.statement } : {}),
    ...(policy !== undefined ? { policy } : {}),
    checkpointed: heads.reduce((most, h) => Math.max(most, h.size), 0),
  });
  problems.push(...assembled.problems, ...checkpointProblems);
  const tree = _prefixTree(assembled);
  const heldBy = checkHeads(heads, tree, final?.statement.size ?? null);
  problems.push(...heldBy.problems);
  const signed = final && check?.reasons.length === 0 && _wholeMatches(final.statement, assembled, tree, problems);
  if (!final) problems.push(_cut(chunks.length, read.events.at(-1)?.line, heldBy.proven));
  const proven = signed ? assembled.size : heldBy.proven;
  // Valid needs the whole signed (every chunk on the signed chain, the statement's root) and nothing else wrong.
  const accepted = signed && problems.length === 0 && check ? await acceptPath(check, options) : undefined;
  for (const r of accepted?.reasons ?? []) problems.push(streamProblem(r.code, r.message, { line: final?.line }));
  const valid = signed === true && problems.length === 0 && accepted?.ok === true;
  // Partial vouches for what a checkpoint proves: with none, nothing in the recording is signed, and anyone could have written it.
  const partial = !final && options.partial === true && proven > 0 && problems.every((p) => p.code === 'STREAM_CUT');
  return result({
    ok: valid,
    verdict: valid ? 'valid' : partial ? 'partial' : 'invalid',
    stream,
    ...(policy !== undefined ? { policy } : {}),
    bytes: _bytes(assembled, partial ? proven : Number.POSITIVE_INFINITY),
    size: final?.statement.size ?? null,
    proven,
    ...(!signed && heldBy.provenBy
      ? { provenBy: { deployer: heldBy.provenBy.deployer, key_id: heldBy.provenBy.keyId } }
      : {}),
    checkpoints: heads.length,
    problems: boundStreamProblems(problems),
    ...(check?.path ? { path: check.path } : {}),
    signaturesChecked: (check?.signaturesChecked ?? 0) + heads.length,
  });
}

/** The one stream every signed event names, when that is not the stream the (unsigned) first line names. */
function _otherStream(events: readonly RecordedEvent[], stream: StreamRef): StreamRef | undefined {
  const named = events.flatMap((e): StreamRef[] =>
    e.type === 'chunk' ? [e.receipt] : e.type === 'final' ? [e.statement] : [],
  );
  const [first] = named;
  if (!first || sameStream(first, stream) || !named.every((n) => sameStream(n, first))) return undefined;
  return { session: first.session, task: first.task, artifact: first.artifact };
}

/** The stream's final event: the first; others are malformed, and one of another stream is not this stream's end. */
function _final(
  events: readonly RecordedEvent[],
  stream: StreamRef,
  problems: StreamProblem[],
): (RecordedEvent & { type: 'final' }) | undefined {
  const finals = events.flatMap((e) => (e.type === 'final' ? [e] : []));
  for (const extra of finals.slice(1))
    problems.push(
      streamProblem('MALFORMED', `Line ${extra.line} is a second final receipt; a stream ends once.`, {
        line: extra.line,
      }),
    );
  const final = finals[0];
  if (!final || sameStream(final.statement, stream)) return final;
  problems.push(
    streamProblem(
      'STREAM_MISMATCH',
      `The final receipt on line ${final.line} ends ${describeStream(final.statement)}, not ${describeStream(stream)}.`,
      { line: final.line },
    ),
  );
  return undefined;
}

/**
 * Chunks the recording shows after the final receipt: the client was shown them after
 * the stream had ended, so the recording's order is not the order they arrived in.
 */
function _afterTheEnd(
  events: readonly RecordedEvent[],
  final: RecordedEvent & { type: 'final' },
  problems: StreamProblem[],
): void {
  const late = events.filter((e) => e.type === 'chunk' && e.line > final.line);
  const first = late[0];
  if (first?.type !== 'chunk') return;
  problems.push(
    streamProblem(
      'CHUNK_REORDERED',
      `Chunk ${first.receipt.seq} on line ${first.line}${late.length > 1 ? ` and ${late.length - 1} more chunks come` : ' comes'} after the final receipt (line ${final.line}): the client was shown ${late.length > 1 ? 'them' : 'it'} after the stream had ended; a recording ends with its final receipt.`,
      { seq: first.receipt.seq, line: first.line },
    ),
  );
}

/** The final receipt as any receipt (nothing consumed yet), over the statement's bytes. */
function _checkFinal(
  final: RecordedEvent & { type: 'final' },
  options: StreamVerifyOptions,
  problems: StreamProblem[],
): PathCheck {
  const path = evidencePath(final.evidence);
  const check: PathCheck = path.ok
    ? checkPath(path.value, finalStatementBytes(final.statement), options)
    : { reasons: path.reasons, signaturesChecked: 0 };
  for (const r of check.reasons)
    problems.push(streamProblem(r.code, `Final receipt: ${r.message}`, { line: final.line }));
  const { size, head } = final.statement;
  if ((size === 0) !== (head === null))
    problems.push(
      streamProblem(
        'STREAM_MISMATCH',
        `The final statement names ${size} chunks and ${head === null ? 'no' : 'a'} last receipt digest: a stream has one exactly when it has chunks.`,
        { line: final.line },
      ),
    );
  return check;
}

/** With every chunk on the signed chain: the tree, the length and the SHA-256 of the whole are the statement's. */
function _wholeMatches(
  statement: FinalStatement,
  assembled: Assembled,
  tree: MerkleTree,
  problems: StreamProblem[],
): boolean {
  for (let seq = 0; seq < statement.size; seq++) if (!assembled.chosen.get(seq)?.signedChain) return false;
  const bytes = _bytes(assembled, statement.size);
  const mismatches = [
    tree.size === statement.size && tree.root().toString('hex') === statement.root ? '' : 'root',
    bytes.length === statement.len ? '' : 'length',
    sha256Hex(bytes) === statement.sha256 ? '' : 'SHA-256',
  ].filter(Boolean);
  if (mismatches.length === 0) return true;
  // Reached only when no chunk is reported: a statement whose own fields disagree.
  if (!problems.some((p) => p.code === 'CHUNK_MISMATCH'))
    problems.push(
      streamProblem(
        'STREAM_MISMATCH',
        `The chunks are those the final receipt's chain names, but their ${mismatches.join(', ')} differ from its statement's.`,
      ),
    );
  return false;
}

/** The tree of the chunks that lead without a break (what checkpoints and the final root are recomputed over). */
function _prefixTree(assembled: Assembled): MerkleTree {
  const tree = new MerkleTree();
  for (let seq = 0; seq < assembled.linked; seq++)
    tree.appendLeafHash((assembled.chosen.get(seq) as { leaf: Buffer }).leaf);
  return tree;
}

function _bytes(assembled: Assembled, limit: number): Buffer {
  const seqs = [...assembled.chosen.keys()].filter((s) => s < limit).sort((a, b) => a - b);
  return Buffer.concat(seqs.map((s) => assembled.chosen.get(s)?.bytes as Buffer));
}

function _cut(received: number, lastLine: number | undefined, proven: number): StreamProblem {
  const checkpointed =
    proven > 0
      ? ` A checkpoint proves the first ${proven} chunks.`
      : ' No checkpoint proves any chunk either: nothing in the recording is signed, so it is not even partial evidence.';
  return streamProblem(
    'STREAM_CUT',
    `The recording ends after ${received} chunks without the stream's final receipt: nothing signed covers the whole stream.${checkpointed}`,
    lastLine === undefined ? {} : { line: lastLine },
  );
}
