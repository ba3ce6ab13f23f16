/**
 * @module
 * `witness mailbox export`: a mailbox, from any store, as the lines of the export
 * format (format.ts), read through verify's evidence reader — one snapshot of a
 * PostgreSQL database, a page at a time — so memory stays bounded. A record that
 * cannot be carried exactly (a torn last line, a line too long to read, an
 * unreadable file) stops the export with what to do: an export that drops evidence
 * would verify clean where the original does not.
 */
import { WitnessError } from '../../core/errors.js';
import { checkpointFor, MerkleFrontier } from '../../attest/tlog/index.js';
import { callLeaf, checkpointSigner, mailboxOrigin } from '../checkpoint.js';
import { readConfig } from '../config.js';
import { type Cursor, openEvidence } from '../evidence.js';
import { hasStaleLock } from '../store/jsonl/lock.js';
import { storeKind } from '../store-kinds.js';
import { type ExportCounts, type ExportRecord, exportHeader, stateOrigin } from './format.js';

/** The export's lines (each without its newline), header first, end line last. */
export async function* exportMailbox(dir: string, options: { keyPath?: string } = {}): AsyncGenerator<string> {
  const config = readConfig(dir);
  // The export ends with a checkpoint signed by the mailbox's checkpoint signer (its
  // Ed25519 key, or an HMAC mailbox's checkpoint key): without it a cut-off export with
  // recounted counts would import as a whole mailbox. An HMAC mailbox made before
  // checkpoint keys has none to sign with.
  const key =
    config.signing.alg === 'ed25519' || config.checkpoint_key
      ? checkpointSigner(dir, config, config.signing.alg === 'ed25519' ? options.keyPath : undefined)
      : undefined;
  const frontier = new MerkleFrontier();
  /** The agent and cursor lines, which no receipt covers: the end line's `state` signs them. */
  const state = new MerkleFrontier();
  if (storeKind(config.store).inFolder && hasStaleLock(dir))
    throw _cannot(
      dir,
      'a writer died holding its lock, and its unfinished write is still there',
      `run \`witness mailbox recover ${dir}\` first`,
    );
  const evidence = await openEvidence(dir, config);
  try {
    const unreadable = evidence.unreadable[0];
    if (unreadable)
      throw _cannot(
        dir,
        `${unreadable.file} is unreadable (${unreadable.why})`,
        'run `witness mailbox verify` to see every problem',
      );
    const counts: ExportCounts = { agents: 0, calls: 0, messages: 0, cursors: 0 };
    const line = (record: ExportRecord) => JSON.stringify(record);
    yield JSON.stringify(exportHeader(config));
    for (const agent of await evidence.agents()) {
      counts.agents++;
      const text = line({ agent });
      state.appendLeafHash(callLeaf(text));
      yield text;
    }
    for await (const l of evidence.calls()) {
      if (l.text === '' && !l.torn) continue;
      if (l.torn || l.text === undefined)
        throw _cannot(
          dir,
          `${evidence.callsFile}:${l.line} is ${l.torn ? 'an unterminated last line' : 'too long to read'}`,
          l.torn
            ? `run \`witness mailbox recover ${dir}\` or start a server on it, which cuts it`
            : 'run `witness mailbox verify` to see every problem',
        );
      counts.calls++;
      frontier.appendLeafHash(callLeaf(l.text));
      yield line({ call: l.text });
    }
    const { cursors, unreadable: badCursors } = await evidence.cursors();
    if (badCursors[0])
      throw _cannot(
        dir,
        `${badCursors[0].file} is not a read cursor (${badCursors[0].why})`,
        'run `witness mailbox verify` to see every problem',
      );
    const read = new Map<string, number>();
    for await (const l of evidence.inboxLines()) {
      if (l.text === '' && !l.torn) continue;
      if (l.torn || l.text === undefined)
        throw _cannot(
          dir,
          `${l.file}:${l.line} is ${l.torn ? 'an unterminated last line' : 'too long to read'}`,
          l.torn
            ? `run \`witness mailbox recover ${dir}\` or start a server on it, which cuts it`
            : 'run `witness mailbox verify` to see every problem',
        );
      counts.messages++;
      if (_beforeCursor(cursors.get(l.agent), l)) read.set(l.agent, (read.get(l.agent) ?? 0) + 1);
      yield line({ message: l.text, to: l.agent });
    }
    for (const [agent, cursor] of cursors) {
      if (cursor.at === 0) continue;
      counts.cursors++;
      const text = line({ cursor: { agent, messages: read.get(agent) ?? 0 } });
      state.appendLeafHash(callLeaf(text));
      yield text;
    }
    const origin = mailboxOrigin(config);
    yield line({
      end: key
        ? {
            ...counts,
            checkpoint: checkpointFor(origin, frontier.size, frontier.root(), key),
            state: checkpointFor(stateOrigin(origin), state.size, state.root(), key),
          }
        : counts,
    });
  } finally {
    await evidence.close();
  }
}

/** The record is one the agent has read: its end (JSONL) or position (database) at or before the cursor. */
function _beforeCursor(cursor: Cursor | undefined, l: { line: number; end: number }): boolean {
  if (!cursor) return false;
  return cursor.unit === 'byte' ? l.end <= cursor.at : l.line <= cursor.at;
}

function _cannot(dir: string, what: string, todo: string): WitnessError {
  return new WitnessError('CORRUPT', `Cannot export ${dir} exactly: ${what}. Nothing was exported; ${todo}.`);
}
