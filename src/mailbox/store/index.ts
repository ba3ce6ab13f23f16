/**
 * @module
 * Opening a mailbox's store, whichever kind `mailbox.json` names (JSONL files,
 * SQLite, PostgreSQL), and reading a snapshot of it for verification.
 */
import { WitnessError } from '../../core/errors.js';
import { loadKey, readConfig, type StoreKind } from '../config.js';
import { signerFor } from '../../attest/signature.js';
import { DEFAULT_LIMITS } from '../limits.js';
import { storeKind } from '../store-kinds.js';
import type { Quota } from './quota.js';
import type { MailboxStore } from './types.js';

export interface OpenStoreOptions {
  /** The signing key file, when not where mailbox.json says. */
  keyPath?: string;
  /** If given, must match the kind the mailbox was created with. */
  kind?: StoreKind;
  /** The per-recipient quota (default: DEFAULT_LIMITS'); other limits are the tools'. */
  limits?: Partial<Quota>;
  /** Only reads (status): a PostgreSQL role then needs SELECT alone. */
  readOnly?: boolean;
}

/** Opens the store `mailbox.json` names (async: a networked store connects first). */
export async function openStore(dir: string, options: OpenStoreOptions = {}): Promise<MailboxStore> {
  const config = readConfig(dir);
  if (options.kind && options.kind !== config.store) {
    throw new WitnessError(
      'USAGE',
      `${dir} was created with --store ${config.store}; it cannot be served as --store ${options.kind}. Drop --store or create a new mailbox.`,
    );
  }
  const signer = signerFor(loadKey(config, options.keyPath));
  const quota: Quota = {
    maxUnreadMessages: options.limits?.maxUnreadMessages ?? DEFAULT_LIMITS.maxUnreadMessages,
    maxUnreadBytes: options.limits?.maxUnreadBytes ?? DEFAULT_LIMITS.maxUnreadBytes,
  };
  return storeKind(config.store).open(dir, config, signer, quota, options.readOnly === true);
}

export { readSnapshot } from './snapshot.js';
export type { MailboxStore, StoreSnapshot } from './types.js';
export { JsonlStore } from './jsonl/driver.js';
export { SqliteStore } from './sqlite/driver.js';
export { PostgresStore } from './postgres/driver.js';
