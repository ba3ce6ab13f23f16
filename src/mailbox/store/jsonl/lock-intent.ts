/**
 * @module
 * The intent a JSONL writer records in its lock file before it writes (lock.ts), signed
 * with the mailbox's own key (the one Signer, under its own domain tag) and bound to the
 * lock owner's nonce. The lock file lies in a folder agents may be able to write, so
 * recovery believes an intent only when its signature holds; and even a genuine intent
 * only says where the unfinished write may begin (tail-repair.ts never cuts below the
 * last genuine, complete entry). `to` is the seq of the last line the write was to add:
 * a genuine intent whose log already holds later genuine lines is stale (copied from an
 * earlier commit) and is reported, not obeyed.
 */
import { DOMAIN_TAGS, taggedBytes } from '../../../attest/domain.js';
import type { Signer, Verifier } from '../../../attest/signature.js';
import { canonicalize } from '../../../core/canonical-json.js';
import { isMailboxFile } from '../files.js';

/** What a lock file's intent line holds (without its signature). */
export interface SignedIntent {
  /** Path relative to the mailbox → size in bytes before the write. */
  files: Record<string, number>;
  /** The seq of the last call-log line the write adds. */
  to: number;
}

export type ReadIntent =
  | { status: 'signed'; intent: SignedIntent }
  | { status: 'forged'; why: string }
  | { status: 'none' };

/** The intent line (no newline) for the lock owned by `nonce`. */
export function intentLine(signer: Signer, nonce: string, intent: SignedIntent): string {
  return JSON.stringify({ intent, sig: signer.sign(_signed(nonce, intent)) });
}

/**
 * The last complete intent line of a lock file (`lines`: the lines after the owner's);
 * a torn one means no write had started. One without a valid signature of this
 * mailbox's key for this owner, or naming anything but mailbox files, is forged.
 */
export function readIntent(lines: string[], nonce: string, verifier: Verifier): ReadIntent {
  for (const line of [...lines].reverse()) {
    let parsed: { intent?: unknown; sig?: unknown };
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      continue; // torn
    }
    if (typeof parsed !== 'object' || parsed === null || parsed.intent === undefined) continue;
    if (typeof parsed.sig !== 'string')
      return {
        status: 'forged',
        why: 'it carries no signature (written by hand, or by a Witness older than signed intents)',
      };
    if (!_shaped(parsed.intent))
      return { status: 'forged', why: 'it names files the mailbox does not write, or sizes that are not byte counts' };
    if (!verifier.verify(_signed(nonce, parsed.intent), parsed.sig))
      return {
        status: 'forged',
        why: `its signature does not verify under the mailbox key ${verifier.kid} for this lock's owner`,
      };
    return { status: 'signed', intent: parsed.intent };
  }
  return { status: 'none' };
}

function _signed(nonce: string, intent: SignedIntent): Buffer {
  return taggedBytes(DOMAIN_TAGS.mailboxIntent, canonicalize({ nonce, files: intent.files, to: intent.to }));
}

function _shaped(intent: unknown): intent is SignedIntent {
  if (typeof intent !== 'object' || intent === null) return false;
  const { files, to } = intent as { files?: unknown; to?: unknown };
  if (!Number.isSafeInteger(to) || (to as number) < 0) return false;
  if (typeof files !== 'object' || files === null || Array.isArray(files)) return false;
  return Object.entries(files).every(
    ([rel, size]) => isMailboxFile(rel) && Number.isSafeInteger(size) && (size as number) >= 0,
  );
}
