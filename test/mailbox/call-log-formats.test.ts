/**
 * Both call-log line formats verify, in the JSONL and SQLite stores and with both kinds of key:
 * mailboxes written before the call log moved onto attest's signer (format v1 lines,
 * the mailbox's own key-file format; test/fixtures/mailbox-v1, made by make.ts with
 * the code of e59f402) and mailboxes written now (v2, domain-tagged), each through the
 * same story of calls. Clean ones verify clean; one edited, dropped, reordered or
 * forged line is reported, at its position, in either format.
 */
import { chmodSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { DOMAIN_TAGS } from '../../src/attest/domain.js';
import { readKeyFile } from '../../src/attest/keys.js';
import { signerFor } from '../../src/attest/signature.js';
import { canonicalBytes } from '../../src/core/canonical-json.js';
import { openStore, verifyMailbox } from '../../src/mailbox/index.js';
import { make } from '../fixtures/mailbox-v1/make.js';
import { forgedCallLine } from './forge.js';
import { tempDir } from './helpers.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'mailbox-v1');
const VARIANTS = ['jsonl-ed25519', 'jsonl-hmac', 'sqlite-ed25519', 'sqlite-hmac'] as const;
type Variant = (typeof VARIANTS)[number];
const FRESH = tempDir('witness-v2-'); // the same story, written by today's code (v2 lines)

interface Copy {
  dir: string;
  keyPath: string;
  store: 'jsonl' | 'sqlite';
}

beforeAll(async () => {
  for (const variant of VARIANTS)
    await make(
      FRESH,
      variant.startsWith('sqlite') ? 'sqlite' : 'jsonl',
      variant.endsWith('hmac') ? 'hmac-sha256' : 'ed25519',
    );
}, 120_000);

/** A private copy of one mailbox (git keeps no 0600 mode: the copy's key is made private again). */
function copy(from: string, variant: Variant): Copy {
  const root = tempDir('witness-formats-');
  cpSync(join(from, variant), root, { recursive: true });
  chmodSync(join(root, 'mailbox.key'), 0o600);
  return {
    dir: join(root, 'mailbox'),
    keyPath: join(root, 'mailbox.key'),
    store: variant.startsWith('sqlite') ? 'sqlite' : 'jsonl',
  };
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

async function problems(mb: Copy): Promise<string[]> {
  return (await verifyMailbox(mb.dir, { keyPath: mb.keyPath })).problems.map((p) => `${p.line}:${p.kind}`);
}

for (const [format, version, from] of [
  ['v1 (the committed fixture from e59f402)', 1, FIXTURES],
  ['v2 (written now)', 2, FRESH],
] as const) {
  describe.each(VARIANTS)(`a ${format} mailbox, %s`, (variant) => {
    it('verifies clean: every receipt, the chain, inboxes and cursors', async () => {
      const mb = copy(from, variant);
      const report = await verifyMailbox(mb.dir, { keyPath: mb.keyPath });
      expect(report.problems).toEqual([]);
      expect(report).toMatchObject({ ok: true, calls: 16, messages: 4 });
      expect(readLog(mb).every((l) => JSON.parse(l).v === version)).toBe(true);
    });

    it('reports an edited line as modified at its position', async () => {
      const mb = copy(from, variant);
      const lines = readLog(mb);
      lines[1] = lines[1]!.replace('"agent":"alice"', '"agent":"bob"');
      writeLog(mb, lines);
      expect(await problems(mb)).toEqual(['2:modified']);
    });

    it('reports a dropped line as deleted where the gap is', async () => {
      const mb = copy(from, variant);
      const lines = readLog(mb);
      lines.splice(8, 1); // seq 9: bob's wait that timed out
      writeLog(mb, lines);
      expect(await problems(mb)).toEqual(['9:deleted']);
    });

    it('reports two swapped lines as reordered', async () => {
      const mb = copy(from, variant);
      const lines = readLog(mb);
      [lines[0], lines[1]] = [lines[1]!, lines[0]!];
      writeLog(mb, lines);
      expect(await problems(mb)).toEqual(['1:reordered', '2:reordered']);
    });

    it('reports an appended line that chains but was signed with another key as forged', async () => {
      const mb = copy(from, variant);
      const lines = readLog(mb);
      writeLog(mb, [
        ...lines,
        forgedCallLine(lines.at(-1)!, { agent: 'alice', tool: 'whoami', ok: true, message_ids: [] }, version),
      ]);
      expect(await problems(mb)).toEqual(['17:forged']);
    });
  });
}

describe('the v2 domain tag', () => {
  /** The newest line re-signed by the mailbox's own key over other bytes than the v2 format signs. */
  function resignNewest(variant: Variant, bytes: (unsigned: Record<string, unknown>) => Buffer): Copy {
    const mb = copy(FRESH, variant);
    const lines = readLog(mb);
    const { receipt, ...unsigned } = JSON.parse(lines.at(-1)!) as Record<string, unknown> & {
      receipt: Record<string, unknown>;
    };
    const signer = signerFor(readKeyFile(mb.keyPath, { hmac: true }));
    lines[lines.length - 1] = JSON.stringify({
      ...unsigned,
      receipt: { ...receipt, sig: signer.sign(bytes(unsigned)) },
    });
    writeLog(mb, lines);
    return mb;
  }

  it.each(VARIANTS)(
    'refuses a v2 line signed by the right key over its untagged form (what a v1 server signed), %s',
    async (variant) => {
      expect(await problems(resignNewest(variant, (u) => canonicalBytes(u)))).toEqual(['16:forged']);
    },
  );

  it.each(VARIANTS)(
    'refuses a v2 line signed by the right key under another record kind’s tag, %s',
    async (variant) => {
      expect(
        await problems(
          resignNewest(variant, (u) => Buffer.concat([Buffer.from(DOMAIN_TAGS.releaseReceipt), canonicalBytes(u)])),
        ),
      ).toEqual(['16:forged']);
    },
  );

  it.each(VARIANTS)(
    'refuses a v1 line after v2 lines even when the right key signed it (a downgrade), %s',
    async (variant) => {
      const mb = resignNewest(variant, (u) => canonicalBytes({ ...u, v: 1 }));
      const lines = readLog(mb);
      const { receipt, ...unsigned } = JSON.parse(lines.at(-1)!) as Record<string, unknown> & {
        receipt: Record<string, unknown>;
      };
      lines[lines.length - 1] = JSON.stringify({ ...unsigned, v: 1, receipt }); // the v1 form its signature covers
      writeLog(mb, lines);
      expect(await problems(mb)).toEqual(['16:forged']);
    },
  );

  it.each(VARIANTS)(
    'accepts a v1 mailbox that today’s server goes on writing (v1 lines, then v2), %s',
    async (variant) => {
      const mb = copy(FIXTURES, variant);
      const store = await openStore(mb.dir, { keyPath: mb.keyPath });
      try {
        await store.send('alice', { to: 'bob', body: 'after the upgrade' });
      } finally {
        await store.close();
      }
      const versions = readLog(mb).map((l) => JSON.parse(l).v);
      expect(
        versions.slice(0, 16).every((v) => v === 1) &&
          versions.slice(16).length > 0 &&
          versions.slice(16).every((v) => v === 2),
      ).toBe(true);
      expect(await problems(mb)).toEqual([]);
    },
  );

  it('reports a v2 line relabelled v1 (keeping its signature) as modified', async () => {
    const mb = copy(FRESH, 'jsonl-ed25519');
    const lines = readLog(mb);
    lines[1] = lines[1]!.replace('{"v":2,', '{"v":1,');
    writeLog(mb, lines);
    expect(await problems(mb)).toEqual(['2:modified']);
  });
});
