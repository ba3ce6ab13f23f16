/**
 * @module
 * `witness mailbox verify` (mailbox.md §1): checks the call log's hash chain and
 * every receipt, then cross-checks the inboxes and read cursors against the log —
 * every stored message must have a verified `send_message` receipt with its id,
 * recipient and digest, every receipt's ids must exist, and no cursor may have
 * moved past a message no read delivered. Each problem names the file, the line
 * and a kind: forged, modified, reordered, deleted, corrupt, orphan or skipped.
 *
 * Everything is streamed (evidence.ts) and parsed strictly (a repeated key is
 * refused: a record must have one reading), keeping a few numbers per log line
 * and per message, so a log or inbox of any size is checked in bounded memory.
 */
import { existsSync } from 'node:fs';
import { sep } from 'node:path';
import { readKeyFile } from '../attest/keys.js';
import type { LogCode } from '../attest/reasons.js';
import { ed25519Verifier, signerFor, type Verifier } from '../attest/signature.js';
import { WitnessError } from '../core/errors.js';
import type { Problem } from '../core/problem.js';
import { type CallRecord, CURSOR_TOOLS, LEGACY_LINE_VERSION } from './call-log.js';
import { isGenuineCall, parseCallRecord } from './call-check.js';
import { MAILBOX_KEY, readConfig } from './config.js';
import { type EvidenceLine, openEvidence } from './evidence.js';
import { type Explanation, Tracer } from './verify-explain.js';
import { lockIntent } from './store/jsonl/lock.js';
import { storeKind } from './store-kinds.js';
import { parseCheckpoint } from '../attest/tlog/index.js';
import { callLeaf, mailboxOrigin, mailboxVerifierKey } from './checkpoint.js';
import { CallLogAnchor } from './verify-checkpoint.js';
import { findWitnessed, type WitnessRequirement } from './verify-witness.js';
import { CallTable, checkChain } from './verify-chain.js';
import { checkInboxes, type Receipts } from './verify-inbox.js';
import { checkIdempotencyRows, type KeyedSends, learnKeyedSend } from './verify-index.js';
/** A mailbox problem's code: attest's log vocabulary (LOG_CODES), and the receipt codes for a trusted key's window and revocation. */
export type MailboxCode = LogCode | KeyCode;
type KeyCode = 'KEY_NOT_VALID_AT_ISSUE' | 'REVOKED_KEY';
/** A problem's kind: its code in lower case. */
export type ProblemKind = Lowercase<MailboxCode>;

/** A mailbox's problem, always at a place: `at` is `file:line`, the file relative to the mailbox folder when inside it. */
export interface VerifyProblem extends Problem<MailboxCode> {
  at: string;
  /** The code in lower case (the field this report has always had). */
  kind: ProblemKind;
  file: string;
  /** 1-based line (JSONL) or row (SQLite); 0 for a whole file (a cursor, a file that is not a regular file). */
  line: number;
}

export interface VerifyReport {
  ok: boolean;
  dir: string;
  store: string;
  key: { alg: string; kid: string; source: string };
  /** Call-log lines whose receipt verifies with the mailbox's key. */
  calls: number;
  /** Call-log lines in all (more than `calls` when some are damaged or forged). */
  callLines: number;
  messages: number;
  problems: VerifyProblem[];
  warnings: string[];
  /** With `explain`: the message's life, each state traced to its receipt. */
  explain?: Explanation;
  /**
   * The signed checkpoints the log was held to (`checkpoint`, `witnesses`): `by` is
   * `checkpoint` for the one given, else the witness's name; `size` the largest checked.
   * With `ok`, the log is shown to extend each.
   */
  anchored: { by: string; size: number }[];
}

export interface MailboxVerifyOptions {
  /** Key file to check receipts with (default: the one mailbox.json names). */
  keyPath?: string;
  /** Pin an Ed25519 public key (base64url) instead of trusting any file. */
  publicKey?: string;
  /** Pin a verifier from the caller's own trust root (e.g. a key directory entry for the mailbox's kid). */
  verifier?: { verifier: Verifier; source: string };
  /**
   * With `verifier` from a key directory: why the key may not vouch for a receipt
   * made at `issuedAtMs` (outside its validity window, or at or after its revocation),
   * or undefined. Each genuine call-log line is checked at its `ts`.
   */
  keyValidity?: (issuedAtMs: number) => { code: KeyCode; message: string } | undefined;
  /** Also trace one message: where it is stored and every receipt that names it (`explain` in the report). */
  explain?: string;
  /** Signed checkpoints of the call log taken before (checkpoint.ts; one note, or several one after another): the log must be that log or an append-only extension of each. */
  checkpoint?: string;
  /** With `verifier`: the Ed25519 public key (base64url) the checkpoint must be signed with (default: as for receipts). */
  checkpointPublicKey?: string;
  /**
   * Witnesses whose cosigned checkpoint the log must extend (verify-witness.ts): each
   * one's largest, from `checkpoint`, its URL or the mailbox's kept copy; none is
   * NOT_WITNESSED.
   */
  witnesses?: readonly WitnessRequirement[];
  /** POSIX seconds taken as now for `withinSeconds` (default: the clock). */
  now?: number;
}

/** `N call receipts`, with the call log's line count beside it when some lines are not receipts (damaged, forged). */
export function receiptCount(report: Pick<VerifyReport, 'calls' | 'callLines'>): string {
  return `${report.calls} call receipts${report.callLines === report.calls ? '' : ` (of ${report.callLines} call-log lines)`}`;
}

export async function verifyMailbox(dir: string, options: MailboxVerifyOptions = {}): Promise<VerifyReport> {
  const config = readConfig(dir);
  const warnings: string[] = [];
  const { signer, source } = _verifier(config, options, warnings);
  const problems: VerifyProblem[] = [];
  const report = (kind: ProblemKind, file: string, line: number, message: string) =>
    problems.push(_problem(dir, kind, file, line, message));
  const key = { alg: signer.alg, kid: signer.kid, source };
  // Another key makes every receipt fail: one line naming both keys says what happened, a page of forgeries would not.
  if (signer.kid !== config.signing.kid || signer.alg !== config.signing.alg) {
    report(
      'wrong_key',
      source,
      0,
      signer.kid !== config.signing.kid
        ? `this is not the mailbox's key: ${source} holds ${signer.kid}, the mailbox signs with ${config.signing.kid} (mailbox.json); give its key file, or leave --key out`
        : `mailbox.json says the mailbox signs with ${config.signing.alg}, but ${source} holds an ${signer.alg} key of the same id: one of them was edited; restore mailbox.json from a copy you trust, or check with your own key (witness verify DIR --keys)`,
    );
    return {
      ok: false,
      dir,
      store: config.store,
      key,
      calls: 0,
      callLines: 0,
      messages: 0,
      problems,
      warnings,
      anchored: [],
    };
  }
  const evidence = await openEvidence(dir, config);
  try {
    for (const u of evidence.unreadable) report('corrupt', u.file, 0, u.why);
    const tracer = options.explain === undefined ? undefined : new Tracer(options.explain, evidence.callsFile);
    const keyed: KeyedSends = new Map();
    const logVkey =
      options.checkpoint === undefined && !options.witnesses?.length
        ? undefined
        : mailboxVerifierKey(dir, {
            ...(options.keyPath !== undefined ? { keyPath: options.keyPath } : {}),
            ...((options.checkpointPublicKey ?? options.publicKey) !== undefined
              ? { publicKey: (options.checkpointPublicKey ?? options.publicKey)! }
              : {}),
          });
    const anchors: CallLogAnchor[] = [];
    // The checkpoint given is checked itself, and with witnesses required is also one place to find a cosigned one.
    if (options.checkpoint !== undefined) {
      const kept = _keptAnchor(options.checkpoint, logVkey as string, config.store);
      if ('anchor' in kept) anchors.push(kept.anchor);
      else report('inconsistent', evidence.callsFile, 0, kept.problem);
    }
    for (const req of options.witnesses ?? []) {
      const found = await findWitnessed(dir, logVkey as string, mailboxOrigin(config), req, {
        ...(options.checkpoint !== undefined ? { checkpoint: options.checkpoint } : {}),
        ...(options.now !== undefined ? { now: options.now } : {}),
      });
      if (!found.ok) {
        report('not_witnessed', evidence.callsFile, 0, found.message);
        continue;
      }
      if (found.problem) report('witness_stale', evidence.callsFile, 0, found.problem.message);
      const head = parseCheckpoint(found.checkpoint.note, [logVkey as string]);
      anchors.push(
        new CallLogAnchor(
          [{ ...head, origin: `${mailboxOrigin(config)} cosigned by ${found.checkpoint.witness}` }],
          config.store,
          found.checkpoint.witness,
        ),
      );
    }
    const keyIssues = new _KeyIssues(options.keyValidity);
    const { table, receipts, torn } = await _readLog(
      evidence.calls(),
      signer,
      evidence.callsFile,
      keyed,
      tracer,
      anchors,
      keyIssues,
    );
    keyIssues.report((kind, line, message) => report(kind, evidence.callsFile, line, message));
    checkChain(table, (kind, line, message) => report(kind, evidence.callsFile, line, message));
    const anchored = anchors.map((a) => ({ by: a.by, size: a.size }));
    // After the chain: an INCONSISTENT reason names the first entry in its range that the chain finds broken. Listed first.
    for (const anchor of anchors.reverse()) {
      const broken = anchor.result((from, to) =>
        problems.find((p) => p.file === evidence.callsFile && p.line >= from && p.line <= to),
      );
      if (broken) problems.unshift(_problem(dir, broken.kind, evidence.callsFile, broken.line, broken.message));
    }
    if (torn !== undefined)
      report(
        'corrupt',
        evidence.callsFile,
        torn,
        'unterminated last line (an interrupted write); starting a server or `witness mailbox recover` cuts it',
      );
    const messages = await checkInboxes(evidence, receipts, report, (w) => warnings.push(w), tracer?.watchInbox);
    await checkIdempotencyRows(evidence, keyed, (id) => receipts.sends.get(id)?.found === true, report);
    const lock = storeKind(config.store).inFolder ? lockIntent(dir, signer) : undefined;
    if (lock?.intent.status === 'forged')
      report(
        'forged',
        '.lock',
        0,
        lock.stale
          ? `the lock file of a dead writer holds an intent the mailbox key did not sign (${lock.intent.why}); recovery will not obey it, but someone who can write the mailbox folder wrote it`
          : `the lock file claims a writer at work (${lock.owner}) and holds an intent the mailbox key did not sign (${lock.intent.why}); every writer of this mailbox signs its intent, so someone who can write the mailbox folder wrote it. If no server of this mailbox is running, remove the .lock file`,
      );
    else if (lock?.stale)
      warnings.push(
        'a writer died holding the lock; its unfinished write is rolled back by the next server start or `witness mailbox recover`.',
      );
    const explain = tracer?.explain(signer, problems);
    return {
      ok: problems.length === 0,
      dir,
      store: config.store,
      key,
      calls: table.genuineLines,
      callLines: table.size,
      messages,
      problems,
      warnings,
      anchored,
      ...(explain ? { explain } : {}),
    };
  } finally {
    await evidence.close();
  }
}

/** `at` names the file as the user sees it in the mailbox folder, whatever path the verifier read it by. */
function _problem(dir: string, kind: ProblemKind, file: string, line: number, message: string): VerifyProblem {
  const folder = dir.endsWith(sep) ? dir : `${dir}${sep}`;
  const where = file.startsWith(folder) ? file.slice(folder.length) : file;
  return { code: kind.toUpperCase() as MailboxCode, message, at: `${where}:${line}`, kind, file, line };
}

/** One pass over the log: the chain table, and what the genuine receipts say. */
async function _readLog(
  lines: Iterable<EvidenceLine> | AsyncIterable<EvidenceLine>,
  signer: Verifier,
  file: string,
  keyed: KeyedSends,
  tracer: Tracer | undefined,
  anchors: readonly CallLogAnchor[],
  keyIssues: _KeyIssues,
): Promise<{ table: CallTable; receipts: Receipts; torn?: number }> {
  const table = new CallTable();
  const receipts: Receipts = { sends: new Map(), reads: [], delivered: new Map() };
  for await (const l of lines) {
    if (l.torn) return { table, receipts, torn: l.line };
    if (l.text === '') continue;
    const parsed = l.text === undefined ? { reason: 'a line of more than 64 MiB' } : parseCallRecord(l.text);
    if (anchors.length > 0) {
      const leaf = l.text === undefined ? Buffer.alloc(32) : callLeaf(l.text); // an over-long line cannot match any checkpoint's leaf
      for (const anchor of anchors) anchor.add(l.line, leaf, 'reason' in parsed ? undefined : parsed);
    }
    tracer?.see(l);
    if ('reason' in parsed) {
      table.add(l.line, l.text, parsed);
      continue;
    }
    const genuine = isGenuineCall(parsed, signer);
    table.add(l.line, l.text, {
      seq: parsed.seq,
      prev: parsed.prev,
      genuine,
      legacy: parsed.v === LEGACY_LINE_VERSION,
    });
    if (genuine) keyIssues.check(parsed.ts, l.line);
    if (genuine && parsed.ok) _learn(parsed, receipts, file, l.line);
    if (
      genuine &&
      parsed.ok &&
      parsed.tool === 'send_message' &&
      !parsed.deduplicated &&
      parsed.idempotency_key !== undefined &&
      parsed.message_ids.length === 1
    ) {
      learnKeyedSend(keyed, {
        sender: parsed.agent,
        key: parsed.idempotency_key,
        id: parsed.message_ids[0]!,
        to: parsed.to?.[0] ?? '',
        ts: parsed.ts,
        file,
        line: l.line,
      });
    }
  }
  return { table, receipts };
}

/**
 * The kept checkpoint as an anchor, or why it cannot be this log's: a note well formed
 * but not signed by the key the log is checked with is evidence (another log's
 * checkpoint, or a mailbox whose key was replaced since), not a usage error.
 */
function _keptAnchor(
  text: string,
  vkey: string,
  store: Parameters<typeof CallLogAnchor.fromKept>[2],
): { anchor: CallLogAnchor } | { problem: string } {
  try {
    return { anchor: CallLogAnchor.fromKept(text, vkey, store) };
  } catch (error) {
    const problem =
      error instanceof WitnessError ? (error.data as { problem?: string } | undefined)?.problem : undefined;
    if (problem !== 'UNVERIFIED' && problem !== 'BAD_SIGNATURE') {
      if (!(error instanceof WitnessError) || error.code !== 'INVALID_INPUT') throw error;
      // Not a note at all: the caller gave the wrong file (exit 2), which the note parser's words alone do not say.
      const what = error.message.includes('`witness mailbox checkpoint')
        ? ''
        : ' Give the file `witness mailbox checkpoint DIR` printed (or several such, appended).';
      throw new WitnessError('INVALID_INPUT', `The checkpoint given is not one: ${error.message}${what}`);
    }
    return {
      problem: `the checkpoint given is not signed by the key this log is checked with (${vkey.split('+')[0]}): ${(error as Error).message} Either it is another log's checkpoint, or this mailbox's key (mailbox.json) was replaced after the checkpoint was kept; \`witness verify DIR --keys YOUR_KEYS\` checks the log with the key you trust.`,
    };
  }
}

/** Genuine receipts the trusted key may not vouch for: one problem per code, at its first line, with how many. */
class _KeyIssues {
  readonly #found = new Map<KeyCode, { line: number; last: number; count: number; message: string }>();
  constructor(private readonly validity: MailboxVerifyOptions['keyValidity']) {}

  check(ts: string, line: number): void {
    const issue = this.validity?.(Date.parse(ts));
    if (!issue) return;
    const seen = this.#found.get(issue.code);
    if (seen) {
      seen.count++;
      seen.last = line;
    } else this.#found.set(issue.code, { line, last: line, count: 1, message: issue.message });
  }

  report(report: (kind: ProblemKind, line: number, message: string) => void): void {
    for (const [code, { line, last, count, message }] of this.#found) {
      const more = count > 1 ? ` ${count} receipts of the log, lines ${line} to ${last}, are in the same case.` : '';
      report(code.toLowerCase() as ProblemKind, line, `${message}${more}`);
    }
  }
}

function _learn(r: CallRecord, receipts: Receipts, file: string, line: number): void {
  if (r.tool === 'send_message') {
    if (r.deduplicated) return;
    r.message_ids.forEach((id, k) => {
      receipts.sends.set(id, { to: r.to?.[k] ?? '', digest: r.digests?.[k], file, line, seq: r.seq, found: false });
    });
    return;
  }
  if (r.message_ids.length === 0) return;
  receipts.reads.push({ ids: r.message_ids, agent: r.agent, file, line });
  // Only reads deliver (a status query or an acknowledgement names a message, moves nothing).
  // A peek leaves the cursor where it was. Logs from before `peek` was recorded count every read as a delivery.
  if (!CURSOR_TOOLS.includes(r.tool) || r.peek === true) return;
  const delivered = receipts.delivered.get(r.agent) ?? new Map<string, string>();
  for (const id of r.message_ids) delivered.set(id, `${file}:${line}`);
  receipts.delivered.set(r.agent, delivered);
}

function _verifier(
  config: ReturnType<typeof readConfig>,
  options: MailboxVerifyOptions,
  warnings: string[],
): { signer: Verifier; source: string } {
  const pins = [options.publicKey, options.keyPath, options.verifier].filter((p) => p !== undefined).length;
  if (pins > 1)
    throw new WitnessError(
      'USAGE',
      'Give either a key file or a pinned public key, not both: receipts are checked with one key.',
    );
  if (options.verifier) return { signer: options.verifier.verifier, source: options.verifier.source };
  if (options.publicKey !== undefined)
    return { signer: ed25519Verifier(config.signing.kid, options.publicKey), source: 'pinned public key' };
  const path = options.keyPath ?? config.signing.key_path;
  // A verifier may check with a key others can read (the check holds), but says that any of them could have signed.
  const read = () => signerFor(readKeyFile(path, { ...MAILBOX_KEY, onShared: (w) => warnings.push(w) }));
  // A key the user pinned is read or the verification fails: falling back to the key
  // mailbox.json names would check the log against what the user did not choose.
  if (options.keyPath !== undefined || existsSync(path)) return { signer: read(), source: path };
  if (config.signing.alg === 'ed25519' && config.signing.public_key) {
    warnings.push(
      `key file ${path} not found: trusting the public key written in mailbox.json (pin one with --public-key).`,
    );
    return { signer: ed25519Verifier(config.signing.kid, config.signing.public_key), source: 'mailbox.json' };
  }
  return { signer: read(), source: path };
}
