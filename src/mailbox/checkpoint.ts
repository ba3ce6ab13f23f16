/**
 * @module
 * Checkpoints of the call log (C2SP signed notes over an RFC 6962 tree, attest/tlog):
 * what catches a log cut at its end, which the hash chain cannot (every line still
 * chains; the last ones are simply gone). Each call-log line is one leaf, and the leaf
 * is the line's exact text as stored (UTF-8, without its newline) — the same bytes the
 * chain's `prev` hashes, identical in every store and in an export. The origin is
 * `witness.mailbox/<mailbox id>`; the mailbox's own (Ed25519) key signs. A checkpoint
 * proves completeness only if it was kept somewhere the log's writer cannot reach, or
 * witnessed: the mailbox keeps none itself.
 */
import { readKeyFile } from '../attest/keys.js';
import { checkpointFor, leafHash, MerkleFrontier, noteVerifierKey } from '../attest/tlog/index.js';
import { WitnessError } from '../core/errors.js';
import { loadKey, MAILBOX_KEY, type MailboxConfig, readConfig } from './config.js';
import { openEvidence } from './evidence.js';

export function mailboxOrigin(config: Pick<MailboxConfig, 'id'>): string {
  return `witness.mailbox/${config.id}`;
}

/** The leaf of one stored call-log line. */
export function callLeaf(text: string): Buffer {
  return leafHash(Buffer.from(text, 'utf8'));
}

/** The current signed checkpoint of the mailbox's call log (every store). */
export async function mailboxCheckpoint(dir: string, options: { keyPath?: string } = {}): Promise<string> {
  const config = readConfig(dir);
  const key = loadKey(config, options.keyPath);
  if (key.alg !== 'ed25519') throw new WitnessError('USAGE', `The mailbox ${dir} signs with an HMAC key; a checkpoint is a signed note others verify with a public key, so it needs an Ed25519 mailbox key.`);
  const frontier = new MerkleFrontier();
  const evidence = await openEvidence(dir, config);
  try {
    for await (const l of evidence.calls()) {
      if (l.torn || l.text === '') continue;
      if (l.text === undefined) throw new WitnessError('CORRUPT', `Line ${l.line} of the call log is longer than any record; run \`witness mailbox verify ${dir}\`: a log with it cannot be checkpointed.`);
      frontier.appendLeafHash(callLeaf(l.text));
    }
  } finally {
    await evidence.close();
  }
  return checkpointFor(mailboxOrigin(config), frontier.size, frontier.root(), key);
}

/** The note verifier key of the mailbox's checkpoints: from its key file, else the public key mailbox.json records. */
export function mailboxVerifierKey(dir: string, options: { keyPath?: string; publicKey?: string } = {}): string {
  const config = readConfig(dir);
  let publicKey = options.publicKey;
  if (publicKey === undefined && config.signing.alg === 'ed25519') {
    try {
      const key = readKeyFile(options.keyPath ?? config.signing.key_path, { ...MAILBOX_KEY, onShared: () => {} });
      if (key.alg === 'ed25519') publicKey = key.publicKey;
    } catch {
      publicKey = config.signing.public_key;
    }
  }
  if (publicKey === undefined) throw new WitnessError('USAGE', `The mailbox ${dir} signs with an HMAC key: it has no checkpoints (they need a public key).`);
  return noteVerifierKey(mailboxOrigin(config), Buffer.from(publicKey, 'base64url'));
}
