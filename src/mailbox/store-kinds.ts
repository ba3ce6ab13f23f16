/**
 * @module
 * The one place that decides, from a mailbox's store kind, what serves it: the live
 * store (engine over its driver), its evidence for verify and export, a follower for
 * `tail`, an import target, a reader of the call log's new lines, and whether it lives in its folder (agents.json, and the
 * folder lock a dead writer may leave for recovery) or in a database. Everything
 * else asks here instead of switching on the kind itself, so a new kind is one entry.
 */
import type { Signer } from '../attest/signature.js';
import type { Message } from './call-log.js';
import {
  type CallLogReader,
  jsonlCallLogReader,
  postgresCallLogReader,
  sqliteCallLogReader,
} from './call-log-reader.js';
import type { MailboxConfig, StoreKind } from './config.js';
import { type Evidence, jsonlEvidence, sqliteEvidence } from './evidence.js';
import { JsonlStore } from './store/jsonl/driver.js';
import { openPostgresEvidence } from './store/postgres/evidence.js';
import { PostgresStore } from './store/postgres/driver.js';
import { followPostgres } from './store/postgres/tail.js';
import type { Quota } from './store/quota.js';
import { SqliteStore } from './store/sqlite/driver.js';
import type { MailboxStore } from './store/types.js';
import { followJsonl, followSqlite } from './tail.js';
import { folderTarget, type ImportTarget, JsonlTarget, SqliteTarget } from './transfer/targets.js';
import { openPostgresTarget } from './transfer/postgres-target.js';

/** New messages since the last call (`skip`: only move past what is there). */
export interface Follower {
  next(skip: boolean): Message[] | Promise<Message[]>;
  close(): void | Promise<void>;
}

export interface StoreKindParts {
  /** `readOnly`: only reads will be asked (a database role then needs fewer rights). */
  open(dir: string, config: MailboxConfig, signer: Signer, quota: Quota, readOnly: boolean): Promise<MailboxStore>;
  evidence(dir: string, config: MailboxConfig): Promise<Evidence>;
  follow(dir: string, config: MailboxConfig, agent: string | undefined, perPoll: number): Promise<Follower>;
  /** An import target in `dir` (checked empty by the caller). */
  target(dir: string, config: MailboxConfig): Promise<ImportTarget>;
  /** Reads the call log's new lines as leaf hashes, for the witness submitter. */
  callLog(dir: string, config: MailboxConfig): Promise<CallLogReader>;
  /** Its data, agents.json and the folder lock are in the mailbox folder (false: in a database, which rolls back itself). */
  inFolder: boolean;
}

const PARTS: Record<StoreKind, StoreKindParts> = {
  jsonl: {
    open: async (dir, _config, signer, quota) => new JsonlStore(dir, signer, quota),
    evidence: async (dir) => jsonlEvidence(dir),
    follow: async (dir, _config, agent) => ({ next: followJsonl(dir, agent), close: () => {} }),
    target: async (dir, config) => folderTarget(dir, (remove) => new JsonlTarget(dir, config, remove)),
    callLog: async (dir) => jsonlCallLogReader(dir),
    inFolder: true,
  },
  sqlite: {
    open: async (dir, _config, signer, quota) => new SqliteStore(dir, signer, quota),
    evidence: async (dir) => sqliteEvidence(dir),
    follow: async (dir, _config, agent) => ({ next: followSqlite(dir, agent), close: () => {} }),
    target: async (dir, config) => folderTarget(dir, (remove) => new SqliteTarget(dir, config, remove)),
    callLog: async (dir) => sqliteCallLogReader(dir),
    inFolder: true,
  },
  postgres: {
    open: (dir, config, signer, quota, readOnly) => PostgresStore.open(dir, config, signer, quota, readOnly),
    evidence: (dir, config) => openPostgresEvidence(config, dir),
    follow: (_dir, config, agent, perPoll) => followPostgres(config, agent, perPoll),
    target: (dir, config) => openPostgresTarget(dir, config),
    callLog: (_dir, config) => postgresCallLogReader(config),
    inFolder: false,
  },
};

/** What serves a mailbox of this kind. */
export function storeKind(kind: StoreKind): StoreKindParts {
  return PARTS[kind];
}
