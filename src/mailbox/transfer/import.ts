/**
 * @module
 * `witness mailbox import FILE DIR`: an export (format.ts) into a new mailbox of any
 * store, with the same id, signing key, agents and every record's exact text — so
 * its receipts verify with the same key, and servers go on extending the same hash
 * chain. Each line is checked before anything is kept (a bad line names its number
 * and what to do); a cut-off export (no end line, counts that differ, a line after the
 * end line) is refused. The mailbox is built in a temporary folder beside DIR and
 * verified there; only a clean verify moves it into place. On any failure — a bad
 * line, or a verify problem (a forged receipt, a duplicated id, reordered calls, a
 * cursor past undelivered mail) — nothing is left: the folder is removed and a
 * database's rows are deleted, so an import is all or nothing.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { readKeyFile } from '../../attest/keys.js';
import { WitnessError } from '../../core/errors.js';
import { parseStrictJson } from '../../core/strict-json.js';
import {
  assertNoMailbox,
  checkpointKeyPath,
  MAILBOX_FORMAT,
  MAILBOX_KEY,
  type MailboxConfig,
  type StoreKind,
} from '../config.js';
import { fileLines } from '../evidence.js';
import { defaultKeyDir } from '../keys.js';
import { agentNameProblem, sameNameAs } from '../names.js';
import { databaseSetting } from '../store/postgres/db.js';
import { type VerifyReport, verifyMailbox } from '../verify.js';
import { CheckpointCheck, MerkleFrontier, noteVerifierKey, parseCheckpoint } from '../../attest/tlog/index.js';
import { callLeaf, mailboxOrigin } from '../checkpoint.js';
import { EXPORT_FORMAT, type ExportCounts, type ExportEnd, type ExportHeader, stateOrigin } from './format.js';
import { openTarget } from './targets.js';

export interface ImportOptions {
  /** The new mailbox's store (default jsonl). */
  store?: StoreKind;
  /** `store: postgres`: the database URL (no password), or `postgres` for $WITNESS_DATABASE_URL. */
  database?: string;
  /** The mailbox's signing key file (default: where `mailbox init` puts a mailbox's key). */
  keyPath?: string;
}

export interface ImportResult {
  config: MailboxConfig;
  counts: ExportCounts;
  report: VerifyReport;
  warnings: string[];
}

const _ORDER = ['agent', 'call', 'message', 'cursor', 'end'] as const;
type _Kind = (typeof _ORDER)[number];

/** What a mailbox id may be: it names the key file (`mailbox-ID.json`), so no path separator or dot. */
const MAILBOX_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export async function importMailbox(file: string, dir: string, options: ImportOptions = {}): Promise<ImportResult> {
  assertNoMailbox(dir);
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new WitnessError('USAGE', `${dir} is not empty; import into a new folder. Nothing was imported.`);
  const lines = fileLines(file)[Symbol.iterator]();
  const header = _header(lines.next().value, file);
  const warnings: string[] = [];
  const config = _config(header, options, warnings);
  // Built beside DIR (same file system: one rename moves it) and moved only when clean.
  const staging = join(dirname(resolve(dir)), `.${basename(dir)}.import-${randomBytes(6).toString('hex')}`);
  const target = await openTarget(staging, config);
  const counts: ExportCounts = { agents: 0, calls: 0, messages: 0, cursors: 0 };
  try {
    const leaves: Buffer[] = [];
    const stateLeaves: Buffer[] = [];
    const end = await _records(lines, file, target, counts, leaves, stateLeaves);
    if (!end) throw _bad(file, 0, 'it has no end line: the export was cut off', 'export the mailbox again');
    for (const k of ['agents', 'calls', 'messages', 'cursors'] as const) {
      if (end[k] !== counts[k])
        throw _bad(file, 0, `its end line counts ${end[k]} ${k} but it holds ${counts[k]}`, 'export the mailbox again');
    }
    _checkAnchored(file, header, config, end, leaves, stateLeaves);
    await target.finish();
  } catch (error) {
    await target.abort();
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  let report: VerifyReport;
  try {
    report = await verifyMailbox(staging);
  } catch (error) {
    await _discard(staging, target);
    throw error;
  }
  if (!report.ok) {
    await _discard(staging, target);
    const shown = report.problems
      .slice(0, 5)
      .map((p) => `${p.file.split(staging).join(dir)}:${p.line}: ${p.kind}: ${p.message}`);
    throw new WitnessError(
      'CORRUPT',
      `${file}: cannot import: the mailbox it holds does not verify (${report.problems.length} problem(s)):\n${shown.join('\n')}${report.problems.length > shown.length ? '\n…' : ''}\nNothing was imported; check the source with \`witness mailbox verify\`, repair it or export it again.`,
    );
  }
  if (existsSync(dir)) rmSync(dir, { recursive: true }); // empty (checked above): rename replaces only a missing name portably
  renameSync(staging, dir);
  return { config, counts, report: { ...report, dir }, warnings };
}

/**
 * The export of a mailbox with a checkpoint signer carries the call log's checkpoint in
 * its end line: the calls imported must be exactly the log it signed. An Ed25519
 * mailbox's is checked with the key the import uses, else the exported public key; an
 * HMAC mailbox's with the checkpoint key its header names. An HMAC mailbox made before
 * checkpoint keys has none; a header without one is believed only where the import's
 * key has no checkpoint key file beside it (a limit, documented).
 */
function _checkAnchored(
  file: string,
  header: ExportHeader,
  config: MailboxConfig,
  end: ExportEnd,
  leaves: Buffer[],
  stateLeaves: Buffer[],
): void {
  const ed25519 = header.mailbox.signing.alg === 'ed25519';
  if (!ed25519 && !header.mailbox.checkpoint_key) {
    // Only a mailbox made before checkpoint keys exports none. Its signing key beside a checkpoint key file says this
    // one had one: the header was edited to skip the checks of its calls, agents and cursors.
    const kept = checkpointKeyPath(config.signing.key_path);
    if (!existsSync(kept)) return;
    throw new WitnessError(
      'CORRUPT',
      `${file}: cannot import: its header names no checkpoint key, but this mailbox has one (${kept}, beside its key): its calls, agents and cursors could have been changed with nothing left to show it. Nothing was imported; export the mailbox again.`,
    );
  }
  const whose = ed25519
    ? "an Ed25519 mailbox's export always has"
    : 'which an export whose header names a checkpoint key always has';
  for (const [note, what, lost] of [
    [end.checkpoint, 'checkpoint of the call log', 'calls may have been dropped'],
    [end.state, 'signed state of its agents and read cursors', 'agents, token hashes or cursors may have been changed'],
  ] as const)
    if (note === undefined)
      throw new WitnessError(
        'CORRUPT',
        `${file}: cannot import: its end line carries no ${what}, ${ed25519 ? `which ${whose}` : whose}: ${lost}. Nothing was imported; export the mailbox again.`,
      );
  const publicKey =
    ed25519 && existsSync(config.signing.key_path)
      ? _importPublicKey(config)
      : Buffer.from(
          (ed25519 ? header.mailbox.signing.public_key : header.mailbox.checkpoint_key?.public_key) ?? '',
          'base64url',
        );
  const vkeyOf = (origin: string) => noteVerifierKey(origin, publicKey);
  _checkState(file, end.state as string, vkeyOf(stateOrigin(mailboxOrigin(config))), stateLeaves);
  const note = end.checkpoint as string;
  const vkey = vkeyOf(mailboxOrigin(config));
  let check: CheckpointCheck;
  try {
    check = new CheckpointCheck(parseCheckpoint(note, [vkey]));
  } catch (error) {
    throw new WitnessError(
      'CORRUPT',
      `${file}: cannot import: the checkpoint in its end line does not verify (${(error as Error).message}). Nothing was imported; export the mailbox again.`,
    );
  }
  for (const leaf of leaves) check.add(leaf);
  const result = check.result();
  const size = parseCheckpoint(note, [vkey]).size;
  if (!result.ok || result.logSize !== size) {
    const why = result.ok
      ? `it holds ${result.logSize} calls, the checkpoint signed ${size}`
      : result.code === 'TRUNCATED'
        ? `${result.message} The first missing call is call ${result.firstMissing + 1}`
        : result.message;
    throw new WitnessError(
      'CORRUPT',
      `${file}: cannot import: its calls are not the call log its checkpoint signed (${result.ok ? 'INCONSISTENT' : result.code}): ${why}. Nothing was imported; export the mailbox again.`,
    );
  }
}

/** The agent and cursor lines are exactly those the export's `state` note signed (format.ts). */
function _checkState(file: string, note: string, vkey: string, leaves: readonly Buffer[]): void {
  let signed: { size: number; root: Buffer };
  try {
    signed = parseCheckpoint(note, [vkey]);
  } catch (error) {
    throw new WitnessError(
      'CORRUPT',
      `${file}: cannot import: the signed state in its end line does not verify (${(error as Error).message}). Nothing was imported; export the mailbox again.`,
    );
  }
  const tree = new MerkleFrontier();
  for (const leaf of leaves) tree.appendLeafHash(leaf);
  if (tree.size !== signed.size || !tree.root().equals(signed.root))
    throw new WitnessError(
      'CORRUPT',
      `${file}: cannot import: its agent and read-cursor lines are not the ${signed.size} the export signed (it holds ${tree.size}): an agent, a token hash or a cursor was changed, added or removed after the export. Nothing was imported; export the mailbox again.`,
    );
}

/** The public key of the import's own key file (the trust root the import verifies with). */
function _importPublicKey(config: MailboxConfig): Buffer {
  const key = readKeyFile(config.signing.key_path, MAILBOX_KEY);
  if (key.alg !== 'ed25519')
    throw new WitnessError(
      'USAGE',
      `The key ${config.signing.key_path} is an HMAC key, but the exported mailbox signs with Ed25519; give its own key with --key. Nothing was imported.`,
    );
  return Buffer.from(key.publicKey, 'base64url');
}

/** Removes a finished import that is not to be kept: its folder, and a database's rows. */
async function _discard(staging: string, target: Awaited<ReturnType<typeof openTarget>>): Promise<void> {
  try {
    await target.discard();
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Feeds every record after the header to the target; returns the end line's counts (undefined when there is none). */
async function _records(
  lines: Iterator<{ line: number; text?: string; torn?: boolean }>,
  file: string,
  target: Awaited<ReturnType<typeof openTarget>>,
  counts: ExportCounts,
  leaves: Buffer[],
  stateLeaves: Buffer[],
): Promise<ExportEnd | undefined> {
  let section = 0;
  const agents: string[] = [];
  const perInbox = new Map<string, number>();
  let lastSeq = 0;
  for (let next = lines.next(); !next.done; next = lines.next()) {
    const { line, text, torn } = next.value;
    if (text === '' && !torn) continue;
    if (torn || text === undefined)
      throw _bad(file, line, torn ? 'its last line is cut off' : 'a line is too long', 'export the mailbox again');
    const [kind, value] = _record(text, file, line);
    const at = _ORDER.indexOf(kind);
    if (at < section)
      throw _bad(
        file,
        line,
        `a ${kind} line comes after the ${_ORDER[section]} lines`,
        'export the mailbox again (lines are in the order agents, calls, messages, cursors, end)',
      );
    section = at;
    if (kind === 'end') return _nothingAfter(lines, file, value as ExportEnd);
    if (kind === 'agent' || kind === 'cursor') stateLeaves.push(callLeaf(text));
    if (kind === 'agent') await target.agent(_agent(value, agents, file, line));
    if (kind === 'call') {
      const text = _string(value, file, line, 'call');
      lastSeq = _inOrder(text, lastSeq, file, line);
      leaves.push(callLeaf(text));
      await target.call(text);
    }
    if (kind === 'message') {
      const m = value as { message: unknown; to: unknown };
      const to = _name(m.to, file, line, 'to');
      perInbox.set(to, (perInbox.get(to) ?? 0) + 1);
      await target.message(to, _string(m.message, file, line, 'message'));
    }
    if (kind === 'cursor') {
      const c = value as { agent?: unknown; messages?: unknown };
      const agent = _name(c.agent, file, line, 'cursor.agent');
      const n = c.messages;
      if (!Number.isSafeInteger(n) || (n as number) < 0 || (n as number) > (perInbox.get(agent) ?? 0))
        throw _bad(
          file,
          line,
          `the cursor of ${agent} counts ${JSON.stringify(n)} messages read, but its inbox holds ${perInbox.get(agent) ?? 0}`,
          'export the mailbox again',
        );
      await target.cursor(agent, n as number);
    }
    counts[`${kind}s` as keyof ExportCounts]++;
  }
  return undefined;
}

/**
 * A call's seq follows the one before it. A SQL store keys calls by seq and would put
 * swapped lines back in order — the import would then not be the export — so the
 * order is checked here (a line that is not JSON has no seq: verify reports it).
 */
function _inOrder(text: string, last: number, file: string, line: number): number {
  let seq: unknown;
  try {
    seq = (JSON.parse(text) as { seq?: unknown } | null)?.seq;
  } catch {
    return last;
  }
  if (typeof seq !== 'number') return last;
  if (seq <= last)
    throw _bad(
      file,
      line,
      `its calls are out of order (seq ${seq} after seq ${last})`,
      'export the mailbox again (calls are in the order of their seq)',
    );
  return seq;
}

/** The end line is the last: anything after it was not counted, so the export is not what its end line says. */
function _nothingAfter<T>(lines: Iterator<{ line: number; text?: string; torn?: boolean }>, file: string, end: T): T {
  for (let next = lines.next(); !next.done; next = lines.next()) {
    if (next.value.text !== '' || next.value.torn)
      throw _bad(
        file,
        next.value.line,
        'a line comes after the end line',
        'export the mailbox again (nothing may follow the end line)',
      );
  }
  return end;
}

function _record(text: string, file: string, line: number): [_Kind, unknown] {
  let value: unknown;
  try {
    value = parseStrictJson(text, { what: `line ${line}` });
  } catch (error) {
    throw _bad(file, line, (error as Error).message, 'export the mailbox again');
  }
  const keys = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value) : [];
  const kind = _ORDER.find((k) => keys.includes(k));
  const allowed: string[] = kind === 'message' ? ['message', 'to'] : [kind ?? ''];
  if (!kind || keys.some((k) => !allowed.includes(k)))
    throw _bad(
      file,
      line,
      `it is not a record of ${EXPORT_FORMAT} (one of ${_ORDER.join(', ')})`,
      'export the mailbox again',
    );
  const record = value as Record<string, unknown>;
  if (kind === 'end') {
    const end = record.end as Record<string, unknown> | null;
    if (
      typeof end !== 'object' ||
      end === null ||
      !['agents', 'calls', 'messages', 'cursors'].every((k) => Number.isSafeInteger(end[k])) ||
      (end.checkpoint !== undefined && typeof end.checkpoint !== 'string')
    )
      throw _bad(
        file,
        line,
        'its end line needs whole counts of agents, calls, messages and cursors',
        'export the mailbox again',
      );
    return [kind, end];
  }
  return [kind, kind === 'message' ? record : record[kind]];
}

function _header(first: { line: number; text?: string } | undefined, file: string): ExportHeader {
  let h: Partial<ExportHeader> | null = null;
  try {
    h = first?.text ? (parseStrictJson(first.text) as Partial<ExportHeader>) : null;
  } catch {
    h = null;
  }
  const signing = h?.mailbox?.signing;
  if (h?.format === EXPORT_FORMAT && (typeof h.mailbox?.id !== 'string' || !MAILBOX_ID.test(h.mailbox.id)))
    throw _bad(
      file,
      1,
      `its mailbox id ${JSON.stringify(h.mailbox?.id)} is not one (letters, digits, _ and -, at most 128: it names the key file)`,
      'give a file written by `witness mailbox export`',
    );
  const ok =
    h?.format === EXPORT_FORMAT &&
    typeof h.mailbox?.id === 'string' &&
    typeof h.mailbox.created === 'string' &&
    (signing?.alg === 'ed25519' || signing?.alg === 'hmac-sha256') &&
    typeof signing.kid === 'string';
  if (!ok)
    throw _bad(
      file,
      1,
      `it does not start with a ${EXPORT_FORMAT} header`,
      'give a file written by `witness mailbox export`',
    );
  const cp = h?.mailbox?.checkpoint_key as { kid?: unknown; public_key?: unknown } | undefined;
  if (cp !== undefined) {
    if (signing?.alg === 'ed25519')
      throw _bad(
        file,
        1,
        'its header names a checkpoint key, which only an HMAC mailbox has (an Ed25519 mailbox signs its checkpoints with its own key)',
        'give a file written by `witness mailbox export`',
      );
    const publicKey =
      typeof cp?.public_key === 'string' && /^[A-Za-z0-9_-]{43}$/.test(cp.public_key)
        ? Buffer.from(cp.public_key, 'base64url')
        : undefined;
    if (typeof cp?.kid !== 'string' || publicKey?.length !== 32)
      throw _bad(
        file,
        1,
        "its header's checkpoint_key needs a kid and a 32-byte base64url Ed25519 public_key",
        'give a file written by `witness mailbox export`',
      );
  }
  return h as ExportHeader;
}

/** The new mailbox's configuration: the exported identity and key id, this host's key file and store. */
function _config(h: ExportHeader, options: ImportOptions, warnings: string[]): MailboxConfig {
  const keyPath = resolve(options.keyPath ?? join(defaultKeyDir(), `mailbox-${h.mailbox.id}.json`));
  if (existsSync(keyPath)) {
    const key = readKeyFile(keyPath, MAILBOX_KEY);
    if (key.kid !== h.mailbox.signing.kid)
      throw new WitnessError(
        'USAGE',
        `The key ${keyPath} has id ${key.kid}, but the exported mailbox signs with ${h.mailbox.signing.kid}; give its own key with --key. Nothing was imported.`,
      );
  } else if (h.mailbox.signing.alg === 'ed25519') {
    warnings.push(
      `no key file at ${keyPath}: verify checks receipts with the public key, but serving needs the key (give --key PATH).`,
    );
  } else {
    throw new WitnessError(
      'USAGE',
      `The exported mailbox signs with an HMAC key and no key file is at ${keyPath}: without it nothing can be verified or served. Give the key with --key PATH. Nothing was imported.`,
    );
  }
  const store = options.store ?? 'jsonl';
  const database = store === 'postgres' ? databaseSetting(options.database ?? 'postgres') : undefined;
  return {
    format: MAILBOX_FORMAT,
    id: h.mailbox.id,
    store,
    ...(database !== undefined ? { database } : {}),
    created: h.mailbox.created,
    signing: { ...h.mailbox.signing, key_path: keyPath },
    ...(h.mailbox.checkpoint_key
      ? { checkpoint_key: _checkpointKey(h.mailbox.checkpoint_key, keyPath, warnings) }
      : {}),
  };
}

/**
 * An HMAC mailbox's checkpoint key carries over (its public half, so its checkpoints
 * and witnessed cosignatures keep verifying); its key file is expected beside the
 * signing key, where `init` puts it. A file there with another key id is refused.
 */
function _checkpointKey(
  cp: { kid: string; public_key: string },
  keyPath: string,
  warnings: string[],
): NonNullable<MailboxConfig['checkpoint_key']> {
  const path = checkpointKeyPath(keyPath);
  if (existsSync(path)) {
    const key = readKeyFile(path, { what: 'mailbox checkpoint key' });
    if (key.kid !== cp.kid)
      throw new WitnessError(
        'USAGE',
        `The key ${path} has id ${key.kid}, but the exported mailbox signs its checkpoints with ${cp.kid}; put its own checkpoint key there (or move this one away). Nothing was imported.`,
      );
  } else {
    warnings.push(
      `no checkpoint key file at ${path}: verify checks checkpoints with the public key, but \`witness mailbox checkpoint\` and --witness need the key there.`,
    );
  }
  return { ...cp, key_path: path };
}

function _agent(
  value: unknown,
  seen: string[],
  file: string,
  line: number,
): { name: string; created: string; description?: string; token_sha256?: string } {
  const a = value as Record<string, unknown> | null;
  const name = _name(a?.name, file, line, 'agent.name');
  const twin = sameNameAs(seen, name);
  if (twin !== undefined)
    throw _bad(file, line, `the agent ${name} is listed twice (as ${twin})`, 'export the mailbox again');
  const optional = (k: string) => (a?.[k] === undefined ? undefined : _string(a[k], file, line, `agent.${k}`));
  seen.push(name);
  const description = optional('description');
  const token = optional('token_sha256');
  return {
    name,
    created: _string(a?.created, file, line, 'agent.created'),
    ...(description !== undefined ? { description } : {}),
    ...(token !== undefined ? { token_sha256: token } : {}),
  };
}

/** An agent name: it becomes a file name in a JSONL mailbox, so it is checked like one. */
function _name(value: unknown, file: string, line: number, field: string): string {
  const problem = agentNameProblem(value);
  if (problem) throw _bad(file, line, `${field} is not an agent name: ${problem}`, 'export the mailbox again');
  return value as string;
}

function _string(value: unknown, file: string, line: number, field: string): string {
  if (typeof value !== 'string') throw _bad(file, line, `${field} must be a string`, 'export the mailbox again');
  return value;
}

function _bad(file: string, line: number, what: string, todo: string): WitnessError {
  return new WitnessError(
    'INVALID_INPUT',
    `${file}${line > 0 ? `:${line}` : ''}: cannot import: ${what}. Nothing was imported; ${todo}.`,
  );
}
