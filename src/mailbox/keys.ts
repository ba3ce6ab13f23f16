/**
 * @module
 * Where the mailbox server's signing key lives and how it is made. Receipts on
 * call-log lines are signed with a key kept outside the mailbox directory (by
 * default under `$XDG_CONFIG_HOME/witness/keys`) so an agent told about the
 * directory is not told where the key is (Basu 2026, *Tool Receipts*: signed by the
 * runtime with a key the model never sees). The key file, its checks and the signer
 * are attest's (one format for every key of Witness): Ed25519 by default, HMAC-SHA256
 * as an option for deployments where the verifier is the server's operator anyway.
 */
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { type KeyMaterial, LEGACY_MAILBOX_DEPLOYER, newHmacKey, newSigningKey, writeKeyFile } from '../attest/keys.js';
import type { SignatureAlg } from '../attest/signature.js';
import { WitnessError } from '../core/errors.js';
import { makeFolders } from '../core/make-folders.js';

/** The deployer a mailbox key names: the server is the runtime that signs. */
export const MAILBOX_DEPLOYER = LEGACY_MAILBOX_DEPLOYER;

export function defaultKeyDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'witness', 'keys');
}

/** Creates a new signing key at `path` (0600, its folder 0700); an existing file is never replaced. */
export function createKeyFile(path: string, alg: SignatureAlg): KeyMaterial {
  const key = alg === 'ed25519' ? newSigningKey(MAILBOX_DEPLOYER) : newHmacKey(MAILBOX_DEPLOYER);
  makeFolders(dirname(path), 0o700);
  try {
    writeKeyFile(path, key);
  } catch (error) {
    if (error instanceof WitnessError && error.code === 'USAGE')
      throw new WitnessError(
        'USAGE',
        `The key file ${path} already exists; pass --key with a new path, or remove it first.`,
      );
    throw error;
  }
  return key;
}
