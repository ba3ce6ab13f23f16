/**
 * @module
 * Checkpoints of the call log (C2SP signed notes over an RFC 6962 tree, attest/tlog):
 * what catches a log cut at its end, which the hash chain cannot (every line still
 * chains; the last ones are simply gone). Each call-log line is one leaf, and the leaf
 * is the line's exact text as stored (UTF-8, without its newline) — the same bytes the
 * chain's `prev` hashes, identical in every store and in an export. The origin is
 * `witness.mailbox/<mailbox id>`; the mailbox's own (Ed25519) key signs. A checkpoint
 * proves completeness only if it was kept somewhere the log's writer cannot reach, or
 * witnessed: the mailbox keeps none itself. An HMAC mailbox's receipts cannot sign a
 * note others verify, so it gets an Ed25519 key for checkpoints alone (`checkpoint_key`
 * in mailbox.json): made by `init`, or for an older mailbox by `checkpoint --create-key`.
 */
import { readKeyFile, type SigningKey } from '../attest/keys.js';
import { checkpointFor, leafHash, MerkleFrontier, noteVerifierKey } from '../attest/tlog/index.js';
import { WitnessError } from '../core/errors.js';
import {
  checkpointKeyPath,
  configPath,
  loadKey,
  MAILBOX_KEY,
  type MailboxConfig,
  newCheckpointKey,
  readConfig,
  writeJsonAtomic,
} from './config.js';
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
  const key = checkpointSigner(dir, config, options.keyPath);
  const frontier = new MerkleFrontier();
  const evidence = await openEvidence(dir, config);
  try {
    for await (const l of evidence.calls()) {
      if (l.torn || l.text === '') continue;
      if (l.text === undefined)
        throw new WitnessError(
          'CORRUPT',
          `Line ${l.line} of the call log is longer than any record; run \`witness mailbox verify ${dir}\`: a log with it cannot be checkpointed.`,
        );
      frontier.appendLeafHash(callLeaf(l.text));
    }
  } finally {
    await evidence.close();
  }
  return checkpointFor(mailboxOrigin(config), frontier.size, frontier.root(), key);
}

/** The key that signs the mailbox's checkpoints: its own Ed25519 key, or an HMAC mailbox's checkpoint key (`keyPath` overrides either). */
export function checkpointSigner(dir: string, config: MailboxConfig, keyPath?: string): SigningKey {
  if (config.signing.alg === 'ed25519') {
    const key = loadKey(config, keyPath);
    if (key.alg === 'ed25519') return key;
  }
  const cp = config.checkpoint_key;
  if (!cp)
    throw new WitnessError(
      'USAGE',
      `The mailbox ${dir} signs its receipts with an HMAC key, which others cannot verify, and has no checkpoint key yet; create one (Ed25519, for checkpoints only) with: witness mailbox checkpoint ${dir} --create-key`,
    );
  const path = keyPath ?? cp.key_path;
  const key = readKeyFile(path, {
    what: 'mailbox checkpoint key',
    whenMissing: 'Pass --key with the checkpoint key `witness mailbox init` or `checkpoint --create-key` made.',
  });
  if (key.kid !== cp.kid)
    throw new WitnessError(
      'INVALID_INPUT',
      `The key ${path} has id ${key.kid} but this mailbox signs its checkpoints with ${cp.kid} (mailbox.json checkpoint_key); pass --key with the right key.`,
    );
  return key;
}

/**
 * Gives an HMAC mailbox made before checkpoint keys its Ed25519 checkpoint key (at
 * `keyPath`, default beside its signing key) and records it in mailbox.json
 * (atomically). Refused for an Ed25519 mailbox (its own key signs) and for one that has one.
 */
export function addCheckpointKey(dir: string, keyPath?: string): NonNullable<MailboxConfig['checkpoint_key']> {
  const config = readConfig(dir);
  if (config.signing.alg === 'ed25519')
    throw new WitnessError(
      'USAGE',
      `The mailbox ${dir} signs with an Ed25519 key, which signs its checkpoints too; it needs no checkpoint key. Drop --create-key.`,
    );
  if (config.checkpoint_key)
    throw new WitnessError(
      'USAGE',
      `The mailbox ${dir} has a checkpoint key already (${config.checkpoint_key.kid}, ${config.checkpoint_key.key_path}); a second would orphan the checkpoints kept so far. Drop --create-key.`,
    );
  const checkpointKey = newCheckpointKey(keyPath ?? checkpointKeyPath(config.signing.key_path));
  writeJsonAtomic(configPath(dir), { ...config, checkpoint_key: checkpointKey });
  return checkpointKey;
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
  if (publicKey === undefined) publicKey = config.checkpoint_key?.public_key;
  if (publicKey === undefined)
    throw new WitnessError(
      'USAGE',
      `The mailbox ${dir} signs with an HMAC key and has no checkpoint key, so it has no checkpoints (they need a public key); create one with: witness mailbox checkpoint ${dir} --create-key`,
    );
  return noteVerifierKey(mailboxOrigin(config), Buffer.from(publicKey, 'base64url'));
}
