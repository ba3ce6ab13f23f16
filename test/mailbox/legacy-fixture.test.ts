/**
 * Mailboxes written before the call log moved onto attest's signer (format v1 lines,
 * the mailbox's own key-file format; test/fixtures/mailbox-v1, made by make.ts with
 * the code of e59f402) still verify clean with today's code, and one edited, dropped,
 * reordered or forged line is still reported, in both stores and with both keys.
 */
import { chmodSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { forgedCallLine } from './forge.js';
import { tempDir } from './helpers.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'mailbox-v1');
const VARIANTS = ['jsonl-ed25519', 'jsonl-hmac', 'sqlite-ed25519', 'sqlite-hmac'] as const;

interface Copy {
  dir: string;
  keyPath: string;
  store: 'jsonl' | 'sqlite';
}

/** A private copy of one fixture (git keeps no 0600 mode: the copy's key is made private again). */
function copy(variant: (typeof VARIANTS)[number]): Copy {
  const root = tempDir('witness-legacy-');
  cpSync(join(FIXTURES, variant), root, { recursive: true });
  chmodSync(join(root, 'mailbox.key'), 0o600);
  return { dir: join(root, 'mailbox'), keyPath: join(root, 'mailbox.key'), store: variant.startsWith('sqlite') ? 'sqlite' : 'jsonl' };
}

/** The call log's lines in stored order, from either store. */
function readLog(mb: Copy): string[] {
  if (mb.store === 'jsonl') return readFileSync(join(mb.dir, 'calls.jsonl'), 'utf8').split('\n').slice(0, -1);
  const db = new Database(join(mb.dir, 'mailbox.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT text FROM calls ORDER BY seq').all() as { text: string }[]).map((r) => r.text);
  } finally {
    db.close();
  }
}

/** Replaces the call log with `lines` (row i holds lines[i] in SQLite), as a same-user attacker could. */
function writeLog(mb: Copy, lines: string[]): void {
  if (mb.store === 'jsonl') {
    writeFileSync(join(mb.dir, 'calls.jsonl'), `${lines.join('\n')}\n`);
    return;
  }
  const db = new Database(join(mb.dir, 'mailbox.sqlite'));
  try {
    db.transaction(() => {
      db.prepare('DELETE FROM calls').run();
      const insert = db.prepare('INSERT INTO calls (seq, text) VALUES (?, ?)');
      for (const [i, text] of lines.entries()) insert.run(i + 1, text);
    })();
  } finally {
    db.close();
  }
}

function problems(mb: Copy): string[] {
  return verifyMailbox(mb.dir, { keyPath: mb.keyPath }).problems.map((p) => `${p.line}:${p.kind}`);
}

describe.each(VARIANTS)('the v1 fixture mailbox %s', (variant) => {
  it('verifies clean: every receipt, the chain, inboxes and cursors', () => {
    const mb = copy(variant);
    const report = verifyMailbox(mb.dir, { keyPath: mb.keyPath });
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ ok: true, calls: 16, messages: 4 });
    expect(readLog(mb).every((l) => JSON.parse(l).v === 1)).toBe(true);
  });

  it('reports an edited line as modified at its position', () => {
    const mb = copy(variant);
    const lines = readLog(mb);
    lines[1] = lines[1]!.replace('"agent":"alice"', '"agent":"bob"');
    writeLog(mb, lines);
    expect(problems(mb)).toEqual(['2:modified']);
  });

  it('reports a dropped line as deleted where the gap is', () => {
    const mb = copy(variant);
    const lines = readLog(mb);
    lines.splice(8, 1); // seq 9: bob's wait that timed out
    writeLog(mb, lines);
    expect(problems(mb)).toEqual(['9:deleted']);
  });

  it('reports two swapped lines as reordered', () => {
    const mb = copy(variant);
    const lines = readLog(mb);
    [lines[0], lines[1]] = [lines[1]!, lines[0]!];
    writeLog(mb, lines);
    expect(problems(mb)).toEqual(['1:reordered', '2:reordered']);
  });

  it('reports an appended line that chains but was signed with another key as forged', () => {
    const mb = copy(variant);
    const lines = readLog(mb);
    writeLog(mb, [...lines, forgedCallLine(lines.at(-1)!, { agent: 'alice', tool: 'whoami', ok: true, message_ids: [] }, 1)]);
    expect(problems(mb)).toEqual(['17:forged']);
  });
});
