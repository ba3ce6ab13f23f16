/**
 * @module
 * `witness mailbox verify` (mailbox.md §1): checks the call log's hash chain and
 * every receipt, then cross-checks the inboxes against the log — every stored
 * message must have a verified `send_message` receipt with its id, recipient and
 * digest, and every receipt's ids must exist. Each problem names the file, the line
 * and a kind: forged, modified, reordered, deleted, corrupt or orphan.
 */
import { existsSync } from 'node:fs';
import { WitnessError } from '../core/errors.js';
import { readableByOthers } from '../core/private-file.js';
import { type CallRecord, GENESIS, lineHash, type Message, messageDigest, type Receipt, signedBytes } from './call-log.js';
import { readConfig } from './config.js';
import { publicVerifier, type ReceiptSigner, readKeyFile, signerFor } from './keys.js';
import { hasStaleLock } from './lock.js';
import { readSnapshot } from './store/index.js';

export type ProblemKind = 'forged' | 'modified' | 'reordered' | 'deleted' | 'corrupt' | 'orphan';

export interface VerifyProblem {
  kind: ProblemKind;
  file: string;
  line: number;
  message: string;
}

export interface VerifyReport {
  ok: boolean;
  dir: string;
  store: string;
  key: { alg: string; kid: string; source: string };
  calls: number;
  messages: number;
  problems: VerifyProblem[];
  warnings: string[];
}

export interface VerifyOptions {
  /** Key file to check receipts with (default: the one mailbox.json names). */
  keyPath?: string;
  /** Pin an Ed25519 public key (base64url) instead of trusting any file. */
  publicKey?: string;
}

interface Line {
  file: string;
  line: number;
  text: string;
  hash: string;
  record?: CallRecord;
  genuine: boolean;
}

export function verifyMailbox(dir: string, options: VerifyOptions = {}): VerifyReport {
  const config = readConfig(dir);
  const warnings: string[] = [];
  const { signer, source } = _verifier(config, options, warnings);
  const snap = readSnapshot(dir);
  const problems: VerifyProblem[] = [];
  const report = (kind: ProblemKind, file: string, line: number, message: string) => problems.push({ kind, file, line, message });

  const lines: Line[] = snap.calls.map((c) => {
    const record = _parseCall(c.text);
    const genuine = !!record && _receiptFits(record.receipt, signer) && signer.verify(signedBytes(record as unknown as Record<string, unknown>), record.receipt.sig);
    return { ...c, hash: lineHash(c.text), genuine, ...(record ? { record } : {}) };
  });
  _checkChain(lines, report);
  if (snap.callsTornTail) report('corrupt', lines[0]?.file ?? `${dir}/calls.jsonl`, lines.length + 1, 'unterminated last line (an interrupted write); starting a server or `witness mailbox recover` cuts it');
  const messages = _checkInboxes(snap.inboxes, lines, report);
  if (hasStaleLock(dir)) warnings.push('a writer died holding the lock; its unfinished write is rolled back by the next server start or `witness mailbox recover`.');
  return { ok: problems.length === 0, dir, store: snap.kind, key: { alg: signer.alg, kid: signer.kid, source }, calls: lines.length, messages, problems, warnings };
}

function _verifier(config: ReturnType<typeof readConfig>, options: VerifyOptions, warnings: string[]): { signer: ReceiptSigner; source: string } {
  if (options.publicKey !== undefined && options.keyPath !== undefined) throw new WitnessError('USAGE', 'Give either a key file or a pinned public key, not both: receipts are checked with one key.');
  if (options.publicKey !== undefined) return { signer: publicVerifier(config.signing.kid, options.publicKey), source: 'pinned public key' };
  const path = options.keyPath ?? config.signing.key_path;
  if (existsSync(path)) {
    const signer = signerFor(readKeyFile(path));
    if (readableByOthers(path)) warnings.push(`the key file ${path} can be read by other users, so any of them could have signed these receipts; run: chmod 600 ${path}`);
    return { signer, source: path };
  }
  if (config.signing.alg === 'ed25519' && config.signing.public_key) {
    warnings.push(`key file ${path} not found: trusting the public key written in mailbox.json (pin one with --public-key).`);
    return { signer: publicVerifier(config.signing.kid, config.signing.public_key), source: 'mailbox.json' };
  }
  return { signer: signerFor(readKeyFile(path)), source: path };
}

function _parseCall(text: string): CallRecord | undefined {
  try {
    const r = JSON.parse(text) as CallRecord;
    const shaped = typeof r === 'object' && r !== null && Number.isInteger(r.seq) && typeof r.prev === 'string' && typeof r.agent === 'string' && typeof r.tool === 'string' && Array.isArray(r.message_ids) && typeof r.receipt?.sig === 'string';
    return shaped ? r : undefined;
  } catch {
    return undefined;
  }
}

type Report = (kind: ProblemKind, file: string, line: number, message: string) => void;

function _checkChain(lines: Line[], report: Report): void {
  // A modified or forged line still occupies its seq; an unreadable one occupies one unknown seq.
  const presentSeqs = new Set(lines.filter((l) => l.record).map((l) => l.record!.seq));
  const genuineAt = new Map<number, number>();
  lines.forEach((l, i) => {
    if (l.genuine && !genuineAt.has(l.record!.seq)) genuineAt.set(l.record!.seq, i);
  });
  const seen = new Map<number, number>();
  let maxSeq = 0;
  let prevHash = GENESIS;
  let prevFlagged = false;
  let unreadable = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const before = prevHash;
    prevHash = l.hash;
    const flag = (kind: ProblemKind, message: string) => {
      report(kind, l.file, l.line, message);
      prevFlagged = true;
    };
    if (!l.record) {
      unreadable++;
      flag('corrupt', 'not a call-log record (unparseable JSON or missing seq/prev/receipt)');
      continue;
    }
    const rec = l.record;
    if (!l.genuine) {
      const next = lines[i + 1]?.record;
      const chainAccepts = !next || next.prev === l.hash || next.prev === before;
      flag(chainAccepts ? 'forged' : 'modified', chainAccepts ? `the receipt on seq ${rec.seq} does not verify with this mailbox's key, yet the chain accepts the line: written without the server` : `seq ${rec.seq} was changed after it was signed (its receipt no longer verifies)`);
      continue;
    }
    const copyOf = seen.get(rec.seq);
    if (copyOf !== undefined) {
      flag('forged', `a second copy of seq ${rec.seq} (first at line ${copyOf}): a replayed receipt`);
      continue;
    }
    seen.set(rec.seq, l.line);
    if (rec.seq <= maxSeq) {
      flag('reordered', `seq ${rec.seq} comes after seq ${maxSeq}`);
      continue;
    }
    if (rec.seq > maxSeq + 1) {
      const missing = _range(maxSeq + 1, rec.seq - 1).filter((s) => !presentSeqs.has(s)).slice(unreadable);
      maxSeq = rec.seq;
      unreadable = 0;
      if (missing.length > 0) {
        flag('deleted', `${missing.length} line(s) missing before seq ${rec.seq} (seq ${missing[0]}${missing.length > 1 ? `–${missing[missing.length - 1]}` : ''})`);
        continue;
      }
      const skipped = (genuineAt.get(rec.seq - 1) ?? -1) > i;
      if (skipped) {
        flag('reordered', `seq ${rec.seq} comes before seq ${rec.seq - 1}`);
        continue;
      }
    }
    maxSeq = rec.seq;
    unreadable = 0;
    const wasFlagged = prevFlagged;
    prevFlagged = false;
    if (rec.prev !== before && !wasFlagged) flag('modified', `does not chain to the line before it: line ${lines[i - 1]?.line ?? 0} is not the line seq ${rec.seq} was appended after`);
  }
}

function _checkInboxes(inboxes: ReturnType<typeof readSnapshot>['inboxes'], lines: Line[], report: Report): number {
  const sends = new Map<string, { to: string; digest: string | undefined; file: string; line: number; seq: number; found: boolean }>();
  const reads: Array<{ ids: string[]; agent: string; file: string; line: number }> = [];
  for (const l of lines) {
    const r = l.record;
    if (!l.genuine || !r?.ok) continue;
    if (r.tool === 'send_message' && !r.deduplicated) {
      r.message_ids.forEach((id, k) => {
        sends.set(id, { to: r.to?.[k] ?? '', digest: r.digests?.[k], file: l.file, line: l.line, seq: r.seq, found: false });
      });
    } else if (r.message_ids.length > 0) reads.push({ ids: r.message_ids, agent: r.agent, file: l.file, line: l.line });
  }
  const stored = new Map<string, string>();
  let count = 0;
  for (const inbox of inboxes) {
    let lastSeq = 0;
    for (const { line, text } of inbox.lines) {
      count++;
      let m: Message;
      try {
        m = JSON.parse(text) as Message;
        if (typeof m.id !== 'string' || typeof m.body !== 'string') throw new Error('no id or body');
      } catch (error) {
        report('corrupt', inbox.file, line, `not a message record (${(error as Error).message})`);
        continue;
      }
      const send = sends.get(m.id);
      if (stored.has(m.id)) report('forged', inbox.file, line, `message ${m.id} is stored twice (first in ${stored.get(m.id)})`);
      else if (!send) report('orphan', inbox.file, line, `message ${m.id} has no verified send_message receipt in the call log (written without the server?)`);
      else if (send.to !== inbox.agent || (send.digest !== undefined && send.digest !== messageDigest(m))) report('modified', inbox.file, line, `message ${m.id} differs from what ${send.file}:${send.line} signed (sender, recipient, body or time changed)`);
      else if (send.seq < lastSeq) report('reordered', inbox.file, line, `message ${m.id} was sent before the message above it`);
      if (send && !stored.has(m.id)) {
        send.found = true;
        lastSeq = Math.max(lastSeq, send.seq);
      }
      stored.set(m.id, `${inbox.file}:${line}`);
    }
    if (inbox.tornTail) report('corrupt', inbox.file, inbox.lines.length + 1, 'unterminated last line (an interrupted write); starting a server or `witness mailbox recover` cuts it');
  }
  for (const [id, send] of sends) {
    if (!send.found) report('deleted', send.file, send.line, `message ${id} to ${send.to} was acknowledged here but is missing from that inbox`);
  }
  for (const r of reads) {
    for (const id of r.ids) if (!stored.has(id)) report('deleted', r.file, r.line, `message ${id} delivered to ${r.agent} here is in no inbox`);
  }
  return count;
}

function _range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let s = from; s <= to && out.length < 10_000; s++) out.push(s);
  return out;
}

/**
 * The receipt names this key and algorithm and holds nothing else. Its fields are
 * outside the signed bytes, and the newest line has no successor whose `prev` would
 * catch an edit, so they are checked here.
 */
function _receiptFits(receipt: Receipt, signer: ReceiptSigner): boolean {
  const keys = Object.keys(receipt).sort().join(',');
  return keys === 'alg,kid,sig' && receipt.alg === signer.alg && receipt.kid === signer.kid;
}
