/**
 * @module
 * Opening a mailbox's store, whichever kind `mailbox.json` names, and reading a
 * snapshot of it for verification.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WitnessError } from '../../core/errors.js';
import { loadKey, readConfig, type StoreKind } from '../config.js';
import { signerFor } from '../keys.js';
import { JsonlStore } from './jsonl.js';
import { SqliteStore, sqliteSnapshot } from './sqlite.js';
import type { MailboxStore, StoreSnapshot } from './types.js';

export interface OpenStoreOptions {
  /** The signing key file, when not where mailbox.json says. */
  keyPath?: string;
  /** If given, must match the kind the mailbox was created with. */
  kind?: StoreKind;
}

export function openStore(dir: string, options: OpenStoreOptions = {}): MailboxStore {
  const config = readConfig(dir);
  if (options.kind && options.kind !== config.store) {
    throw new WitnessError('USAGE', `${dir} was created with --store ${config.store}; it cannot be served as --store ${options.kind}. Drop --store or create a new mailbox.`);
  }
  const signer = signerFor(loadKey(config, options.keyPath));
  return config.store === 'sqlite' ? new SqliteStore(dir, signer) : new JsonlStore(dir, signer);
}

export function readSnapshot(dir: string): StoreSnapshot {
  const config = readConfig(dir);
  return config.store === 'sqlite' ? sqliteSnapshot(dir) : jsonlSnapshot(dir);
}

function jsonlSnapshot(dir: string): StoreSnapshot {
  const callsFile = join(dir, 'calls.jsonl');
  const calls = _lines(callsFile);
  const inboxDir = join(dir, 'inbox');
  const inboxes = existsSync(inboxDir)
    ? readdirSync(inboxDir)
        .filter((f) => f.endsWith('.jsonl'))
        .sort()
        .map((f) => {
          const file = join(inboxDir, f);
          const read = _lines(file);
          return { agent: f.slice(0, -'.jsonl'.length), file, lines: read.lines, tornTail: read.tornTail };
        })
    : [];
  return { kind: 'jsonl', calls: calls.lines.map((l) => ({ file: callsFile, ...l })), callsTornTail: calls.tornTail, inboxes };
}

function _lines(file: string): { lines: Array<{ line: number; text: string }>; tornTail: boolean } {
  if (!existsSync(file)) return { lines: [], tornTail: false };
  const parts = readFileSync(file, 'utf8').split('\n');
  const tornTail = parts[parts.length - 1] !== '';
  parts.pop();
  const lines: Array<{ line: number; text: string }> = [];
  parts.forEach((text, i) => {
    if (text !== '') lines.push({ line: i + 1, text });
  });
  return { lines, tornTail };
}

export type { MailboxStore, StoreSnapshot } from './types.js';
export { JsonlStore } from './jsonl.js';
export { SqliteStore } from './sqlite.js';
