/**
 * @module
 * The mailbox directory's own files: `mailbox.json` (format, store kind, which key
 * signs receipts) and `agents.json` (the registered agents and the SHA-256 of each
 * HTTP bearer token — never the token itself). Both are replaced atomically
 * (write a temporary file, fsync, rename) so a reader never sees half a file.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../core/atomic-write.js';
import { WitnessError } from '../core/errors.js';
import { makeFolders } from '../core/make-folders.js';
import { parseStrictJson } from '../core/strict-json.js';
import { sha256Hex } from '../core/hash.js';
import { type KeyMaterial, readKeyFile } from '../attest/keys.js';
import type { SignatureAlg } from '../attest/signature.js';
import { createKeyFile, defaultKeyDir } from './keys.js';
import { agentNameProblem, assertAgentName, sameNameAs } from './names.js';

export const MAILBOX_FORMAT = 'witness-mailbox/1';
export type StoreKind = 'jsonl' | 'sqlite' | 'postgres';
export const STORE_KINDS: readonly StoreKind[] = ['jsonl', 'sqlite', 'postgres'];

export interface MailboxConfig {
  format: typeof MAILBOX_FORMAT;
  id: string;
  store: StoreKind;
  /**
   * `store: postgres` only: the database, as a URL without a password, or `postgres`
   * for the URL in $WITNESS_DATABASE_URL (a password never goes into this file, which
   * agents may be able to read).
   */
  database?: string;
  created: string;
  signing: { alg: SignatureAlg; kid: string; public_key?: string; key_path: string };
  /**
   * An HMAC mailbox's Ed25519 key for checkpoints only (checkpoint.ts): a checkpoint is
   * a signed note others verify with a public key, which an HMAC key has not. Receipts
   * stay HMAC. An Ed25519 mailbox signs its checkpoints with `signing` and has none.
   */
  checkpoint_key?: { kid: string; public_key: string; key_path: string };
}

export interface AgentEntry {
  name: string;
  description?: string;
  created: string;
  /** SHA-256 (hex) of the agent's HTTP bearer token. */
  token_sha256?: string;
}

export interface InitOptions {
  store?: StoreKind;
  /** `store: postgres`: the database URL (no password), or `postgres` for $WITNESS_DATABASE_URL. */
  database?: string;
  keyPath?: string;
  alg?: SignatureAlg;
}

/** How the mailbox reads its key file (attest's one reader): HMAC allowed, named by its role. */
export const MAILBOX_KEY = {
  what: 'mailbox signing key',
  whenMissing: 'Pass --key with the key created by `witness mailbox init`.',
  hmac: true,
} as const;

export function configPath(dir: string): string {
  return join(dir, 'mailbox.json');
}

/** Refuses a folder that already holds a mailbox (before anything is created for a new one). */
export function assertNoMailbox(dir: string): void {
  if (existsSync(configPath(dir)))
    throw new WitnessError('USAGE', `${dir} already holds a mailbox (mailbox.json exists); nothing was changed.`);
}

/** A new mailbox's id and signing key (created now, mode 0600, outside the folder by default). */
export function newMailboxKey(options: InitOptions): {
  id: string;
  keyPath: string;
  key: KeyMaterial;
  checkpointKey?: MailboxConfig['checkpoint_key'];
} {
  const id = randomUUID();
  const keyPath = resolve(options.keyPath ?? join(defaultKeyDir(), `mailbox-${id}.json`));
  const key = createKeyFile(keyPath, options.alg ?? 'ed25519');
  return {
    id,
    keyPath,
    key,
    ...(key.alg === 'ed25519' ? {} : { checkpointKey: newCheckpointKey(checkpointKeyPath(keyPath)) }),
  };
}

/** Where an HMAC mailbox's checkpoint key goes by default: beside its signing key. */
export function checkpointKeyPath(keyPath: string): string {
  return `${keyPath.endsWith('.json') ? keyPath.slice(0, -'.json'.length) : keyPath}.checkpoint.json`;
}

/** Creates an HMAC mailbox's Ed25519 checkpoint key at `path` (0600; never over a file), as mailbox.json records it. */
export function newCheckpointKey(path: string): NonNullable<MailboxConfig['checkpoint_key']> {
  const key = createKeyFile(resolve(path), 'ed25519');
  if (key.alg !== 'ed25519') throw new Error('unreachable: an Ed25519 key was created');
  return { kid: key.kid, public_key: key.publicKey, key_path: resolve(path) };
}

/** The configuration of a new mailbox signed by `key`. */
export function newMailboxConfig(
  id: string,
  keyPath: string,
  key: KeyMaterial,
  store: StoreKind,
  database?: string,
  checkpointKey?: MailboxConfig['checkpoint_key'],
): MailboxConfig {
  return {
    format: MAILBOX_FORMAT,
    id,
    store,
    ...(database !== undefined ? { database } : {}),
    created: new Date().toISOString(),
    signing: {
      alg: key.alg,
      kid: key.kid,
      ...(key.alg === 'ed25519' ? { public_key: key.publicKey } : {}),
      key_path: keyPath,
    },
    ...(checkpointKey ? { checkpoint_key: checkpointKey } : {}),
  };
}

/**
 * Writes a mailbox folder's own files, mailbox.json last (a folder without it is no
 * mailbox, so an interrupted init leaves none). File stores get their empty
 * inbox/, cursors/ and agents.json; a PostgreSQL mailbox keeps those in its database.
 */
export function writeMailboxFiles(dir: string, config: MailboxConfig): void {
  makeFolders(dir);
  if (config.store !== 'postgres') {
    makeFolders(join(dir, 'inbox'));
    makeFolders(join(dir, 'cursors'));
    writeJsonAtomic(join(dir, 'agents.json'), { agents: [] });
  }
  writeJsonAtomic(configPath(dir), config);
}

export function readConfig(dir: string): MailboxConfig {
  const path = configPath(dir);
  if (!existsSync(path))
    throw new WitnessError(
      'NOT_FOUND',
      `${dir} is not a mailbox (no mailbox.json). Create one with \`witness mailbox init ${dir}\`.`,
    );
  const config = _readJson(path) as Partial<MailboxConfig> | null;
  const signing = config?.signing as Partial<MailboxConfig['signing']> | undefined;
  const signingOk =
    typeof signing === 'object' &&
    signing !== null &&
    (signing.alg === 'ed25519' || signing.alg === 'hmac-sha256') &&
    typeof signing.kid === 'string' &&
    typeof signing.key_path === 'string' &&
    signing.key_path !== '' &&
    (signing.public_key === undefined || typeof signing.public_key === 'string');
  const storeOk =
    config !== null &&
    STORE_KINDS.includes(config.store as StoreKind) &&
    (config.store === 'postgres'
      ? typeof config.database === 'string' && config.database !== ''
      : config.database === undefined);
  const cp = config?.checkpoint_key as Partial<NonNullable<MailboxConfig['checkpoint_key']>> | undefined;
  const checkpointOk =
    cp === undefined ||
    (typeof cp === 'object' &&
      cp !== null &&
      typeof cp.kid === 'string' &&
      typeof cp.public_key === 'string' &&
      typeof cp.key_path === 'string' &&
      cp.key_path !== '');
  if (config?.format !== MAILBOX_FORMAT || !storeOk || !signingOk || !checkpointOk) {
    throw new WitnessError(
      'INVALID_INPUT',
      `${path} is not a ${MAILBOX_FORMAT} configuration (it needs format, store (${STORE_KINDS.join(', ')}; postgres with its database) and signing {alg, kid, key_path}); restore it from the mailbox's creation or a backup.`,
    );
  }
  return config as MailboxConfig;
}

/**
 * The signing key for serving: readable by its owner only (whoever can read it can
 * sign receipts) and the one the mailbox was created with.
 */
export function loadKey(config: MailboxConfig, keyPath?: string): KeyMaterial {
  const key = readKeyFile(keyPath ?? config.signing.key_path, MAILBOX_KEY);
  if (key.kid !== config.signing.kid) {
    throw new WitnessError(
      'INVALID_INPUT',
      `The key ${keyPath ?? config.signing.key_path} has id ${key.kid} but this mailbox signs with ${config.signing.kid}; pass --key with the right key.`,
    );
  }
  return key;
}

/**
 * The registered agents. Each name becomes a file name, so a file with an invalid
 * name or two names equal but for case is refused, not served.
 */
export function readAgents(dir: string): AgentEntry[] {
  const path = join(dir, 'agents.json');
  if (!existsSync(path)) return [];
  const parsed = _readJson(path) as { agents?: AgentEntry[] } | null;
  const agents = Array.isArray(parsed?.agents) ? parsed.agents : [];
  const seen: string[] = [];
  agents.forEach((agent, i) => {
    const problem = agentNameProblem(agent?.name);
    if (problem)
      throw new WitnessError(
        'INVALID_INPUT',
        `${path}: entry ${i + 1} is not a usable agent: ${problem}. Fix or remove it.`,
      );
    const twin = sameNameAs(seen, agent.name);
    if (twin !== undefined)
      throw new WitnessError(
        'INVALID_INPUT',
        `${path} registers both ${twin} and ${agent.name}; agent names must differ regardless of case (they are file names). Remove or rename one.`,
      );
    seen.push(agent.name);
  });
  return agents;
}

/** A stamp that changes whenever agents.json is replaced: servers re-read it only then. */
export function agentsStamp(dir: string): string {
  try {
    const s = statSync(join(dir, 'agents.json'));
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return 'missing';
  }
}

export function newToken(): string {
  return `wmb_${randomBytes(32).toString('base64url')}`;
}

export function tokenHash(token: string): string {
  return sha256Hex(`witness-mailbox-token:${token}`);
}

/** Adds `name` to `entries` (a copy); the caller holds the directory lock. */
export function withAgent(entries: AgentEntry[], name: string, token: string, description?: string): AgentEntry[] {
  assertAgentName(name);
  const twin = sameNameAs(
    entries.map((a) => a.name),
    name,
  );
  if (twin === name) throw new WitnessError('USAGE', `The agent ${name} is already registered; pick another name.`);
  if (twin !== undefined)
    throw new WitnessError(
      'USAGE',
      `The name ${name} differs only in case from the registered agent ${twin}; names are unique regardless of case (they are file names). Pick another name.`,
    );
  const entry: AgentEntry = {
    name,
    created: new Date().toISOString(),
    token_sha256: tokenHash(token),
    ...(description ? { description } : {}),
  };
  return [...entries, entry];
}

/** Replaces a mailbox's own JSON file atomically and durably (core's `writeFileAtomic`). */
export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o644 });
}

/** Strict JSON (a repeated key is refused: the file must have one reading). */
function _readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new WitnessError('IO', `Cannot read ${path}: ${(cause as Error).message}.`, { cause });
  }
  try {
    return parseStrictJson(text, { what: path });
  } catch (cause) {
    throw new WitnessError('CORRUPT', (cause as Error).message, { cause });
  }
}
