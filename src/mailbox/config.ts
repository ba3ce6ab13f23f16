/**
 * @module
 * The mailbox directory's own files: `mailbox.json` (format, store kind, which key
 * signs receipts) and `agents.json` (the registered agents and the SHA-256 of each
 * HTTP bearer token — never the token itself). Both are replaced atomically
 * (write a temporary file, fsync, rename) so a reader never sees half a file.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../core/atomic-write.js';
import { WitnessError } from '../core/errors.js';
import { parseStrictJson } from '../core/strict-json.js';
import { sha256Hex } from '../core/hash.js';
import { type KeyMaterial, readKeyFile } from '../attest/keys.js';
import type { SignatureAlg } from '../attest/signature.js';
import { createKeyFile, defaultKeyDir } from './keys.js';
import { agentNameProblem, assertAgentName, sameNameAs } from './names.js';

export const MAILBOX_FORMAT = 'witness-mailbox/1';
export type StoreKind = 'jsonl' | 'sqlite';

export interface MailboxConfig {
  format: typeof MAILBOX_FORMAT;
  id: string;
  store: StoreKind;
  created: string;
  signing: { alg: SignatureAlg; kid: string; public_key?: string; key_path: string };
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
  keyPath?: string;
  alg?: SignatureAlg;
}

/** How the mailbox reads its key file (attest's one reader): HMAC allowed, named by its role. */
export const MAILBOX_KEY = { what: 'mailbox signing key', whenMissing: 'Pass --key with the key created by `witness mailbox init`.', hmac: true } as const;

export function configPath(dir: string): string {
  return join(dir, 'mailbox.json');
}

/** Creates an empty mailbox in `dir` and its signing key. Refuses to overwrite one. */
export function initMailbox(dir: string, options: InitOptions = {}): { config: MailboxConfig; key: KeyMaterial } {
  if (existsSync(configPath(dir))) throw new WitnessError('USAGE', `${dir} already holds a mailbox (mailbox.json exists); nothing was changed.`);
  mkdirSync(join(dir, 'inbox'), { recursive: true });
  mkdirSync(join(dir, 'cursors'), { recursive: true });
  const id = randomUUID();
  const keyPath = resolve(options.keyPath ?? join(defaultKeyDir(), `mailbox-${id}.json`));
  const key = createKeyFile(keyPath, options.alg ?? 'ed25519');
  const config: MailboxConfig = {
    format: MAILBOX_FORMAT,
    id,
    store: options.store ?? 'jsonl',
    created: new Date().toISOString(),
    signing: { alg: key.alg, kid: key.kid, ...(key.alg === 'ed25519' ? { public_key: key.publicKey } : {}), key_path: keyPath },
  };
  writeJsonAtomic(join(dir, 'agents.json'), { agents: [] });
  writeJsonAtomic(configPath(dir), config);
  return { config, key };
}

export function readConfig(dir: string): MailboxConfig {
  const path = configPath(dir);
  if (!existsSync(path)) throw new WitnessError('NOT_FOUND', `${dir} is not a mailbox (no mailbox.json). Create one with \`witness mailbox init ${dir}\`.`);
  const config = _readJson(path) as Partial<MailboxConfig> | null;
  const signing = config?.signing as Partial<MailboxConfig['signing']> | undefined;
  const signingOk =
    typeof signing === 'object' && signing !== null && (signing.alg === 'ed25519' || signing.alg === 'hmac-sha256') && typeof signing.kid === 'string' && typeof signing.key_path === 'string' && signing.key_path !== '' && (signing.public_key === undefined || typeof signing.public_key === 'string');
  if (config?.format !== MAILBOX_FORMAT || (config.store !== 'jsonl' && config.store !== 'sqlite') || !signingOk) {
    throw new WitnessError('INVALID_INPUT', `${path} is not a ${MAILBOX_FORMAT} configuration (it needs format, store and signing {alg, kid, key_path}); restore it from the mailbox's creation or a backup.`);
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
    throw new WitnessError('INVALID_INPUT', `The key ${keyPath ?? config.signing.key_path} has id ${key.kid} but this mailbox signs with ${config.signing.kid}; pass --key with the right key.`);
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
    if (problem) throw new WitnessError('INVALID_INPUT', `${path}: entry ${i + 1} is not a usable agent: ${problem}. Fix or remove it.`);
    const twin = sameNameAs(seen, agent.name);
    if (twin !== undefined) throw new WitnessError('INVALID_INPUT', `${path} registers both ${twin} and ${agent.name}; agent names must differ regardless of case (they are file names). Remove or rename one.`);
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
  const twin = sameNameAs(entries.map((a) => a.name), name);
  if (twin === name) throw new WitnessError('USAGE', `The agent ${name} is already registered; pick another name.`);
  if (twin !== undefined) throw new WitnessError('USAGE', `The name ${name} differs only in case from the registered agent ${twin}; names are unique regardless of case (they are file names). Pick another name.`);
  const entry: AgentEntry = { name, created: new Date().toISOString(), token_sha256: tokenHash(token), ...(description ? { description } : {}) };
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
