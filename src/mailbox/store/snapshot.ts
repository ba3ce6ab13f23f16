/**
 * @module
 * Every stored call-log line and message of a mailbox with its position, from any
 * store, for tools that look at a whole (small) mailbox at once — the probe, tests.
 * Read through verify's evidence reader (evidence.ts), the one reader of stored
 * lines; a line too long to hold as a string is kept as a short note, which verify
 * reports as a corrupt line instead of failing on it.
 */
import { readConfig } from '../config.js';
import { openEvidence } from '../evidence.js';
import type { StoreSnapshot } from './types.js';

export async function readSnapshot(dir: string): Promise<StoreSnapshot> {
  const config = readConfig(dir);
  const evidence = await openEvidence(dir, config);
  try {
    const snapshot: StoreSnapshot = { kind: config.store, calls: [], callsTornTail: false, inboxes: [] };
    for await (const l of evidence.calls()) {
      if (l.torn) snapshot.callsTornTail = true;
      else if (l.text !== '') snapshot.calls.push({ file: evidence.callsFile, line: l.line, text: l.text ?? _tooLong });
    }
    let inbox: StoreSnapshot['inboxes'][number] | undefined;
    for await (const l of evidence.inboxLines()) {
      if (inbox?.agent !== l.agent) {
        inbox = { agent: l.agent, file: l.file, lines: [], tornTail: false };
        snapshot.inboxes.push(inbox);
      }
      if (l.torn) inbox.tornTail = true;
      else if (l.text !== '') inbox.lines.push({ line: l.line, text: l.text ?? _tooLong });
    }
    return snapshot;
  } finally {
    await evidence.close();
  }
}

const _tooLong = '<a line too long to read>';
