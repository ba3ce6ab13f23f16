/**
 * A hash chain cannot show that its end was cut off: delete the last send receipt and
 * its inbox line and every remaining line still chains. A signed checkpoint taken
 * before (`witness mailbox checkpoint`) does: `verify --checkpoint` says TRUNCATED,
 * naming the first missing entry, and INCONSISTENT for a log rolled back and rewritten.
 */
import { appendFileSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/mailbox/index.js';
import { cli, makeMailbox, type TestMailbox, type TestStore, tempDir } from './helpers.js';
import { withTables } from './raw-tables.js';

async function sendAll(mb: TestMailbox, bodies: string[]): Promise<string[]> {
  const store = await openStore(mb.dir, { keyPath: mb.keyPath });
  try {
    const ids: string[] = [];
    for (const body of bodies) ids.push((await store.send('alice', { to: 'bob', body })).id);
    return ids;
  } finally {
    await store.close();
  }
}

/** Cuts the newest `n` lines of a JSONL file. */
function cutLines(path: string, n: number): void {
  const lines = readFileSync(path, 'utf8').split('\n').slice(0, -1);
  truncateSync(
    path,
    Buffer.byteLength(
      lines
        .slice(0, -n)
        .map((l) => `${l}\n`)
        .join(''),
    ),
  );
}

async function dropLastSend(kind: TestStore, mb: TestMailbox, id: string): Promise<void> {
  if (kind === 'jsonl') {
    cutLines(join(mb.dir, 'calls.jsonl'), 1);
    cutLines(join(mb.dir, 'inbox', 'bob.jsonl'), 1);
    return;
  }
  await withTables(kind, mb.dir, async (sql) => {
    await sql('DELETE FROM calls WHERE seq = (SELECT max(seq) FROM calls)');
    await sql('DELETE FROM messages WHERE id = ?', [id]);
  });
}

for (const kind of ['jsonl', 'sqlite', 'postgres'] as const) {
  describe(`${kind}: checkpoints of the call log`, () => {
    it('with a checkpoint taken before, a cut-off last send is TRUNCATED naming the first missing entry; without one it is not seen', async () => {
      const mb = await makeMailbox(['alice', 'bob'], { store: kind });
      try {
        const ids = await sendAll(mb, ['one', 'two', 'three']);
        const checkpoint = join(tempDir(), 'kept.checkpoint');
        writeFileSync(checkpoint, (await cli(['mailbox', 'checkpoint', mb.dir])).out);
        expect(readFileSync(checkpoint, 'utf8')).toMatch(/^witness\.mailbox\/[0-9a-f-]+\n3\n/);
        expect((await cli(['mailbox', 'verify', mb.dir, '--checkpoint', checkpoint])).out).toMatch(
          /^OK: 3 call receipts.*; the call log extends the checkpoint \S+kept\.checkpoint \(3 entries\)$/m,
        );
        await dropLastSend(kind, mb, ids[2]!);
        expect((await cli(['mailbox', 'verify', mb.dir])).out).toMatch(/^OK: 2 call receipts, 2 messages/m); // the documented limit
        const { out } = await cli(['mailbox', 'verify', mb.dir, '--checkpoint', checkpoint, '--json'], 1);
        const problems = (JSON.parse(out) as { problems: Array<{ code: string; line: number; message: string }> })
          .problems;
        expect(problems.map((p) => [p.code, p.line])).toEqual([['TRUNCATED', 3]]);
        expect(problems[0]!.message).toMatch(
          /holds 2 entries, but a checkpoint of witness\.mailbox\/.* signed for 3: the last 1 it covers \(from entry 3\) and any after them were cut off or rolled back\. The first missing entry is call-log (line 3 \(seq 3\)|seq 3 \(row 3\))\./,
        );
      } finally {
        await mb.cleanup();
      }
    });

    it('a log rolled back and rewritten with the key: kept checkpoints one apart name the first changed entry, its seq, tool and message id', async () => {
      const mb = await makeMailbox(['alice', 'bob'], { store: kind });
      try {
        const kept = join(tempDir(), 'kept.checkpoints');
        writeFileSync(kept, '');
        for (const body of ['one', 'two', 'three']) {
          await sendAll(mb, [body]);
          appendFileSync(kept, (await cli(['mailbox', 'checkpoint', mb.dir])).out); // kept as the log grows
        }
        const ids = await _ids(kind, mb);
        await dropLastSend(kind, mb, ids[2]!);
        const [forked] = await sendAll(mb, ['three, rewritten']);
        expect((await cli(['mailbox', 'verify', mb.dir])).out).toMatch(/^OK: 3 call receipts/m); // the chain is whole, every receipt genuine
        for (const command of [
          ['mailbox', 'verify', mb.dir],
          ['verify', mb.dir],
        ]) {
          const { out } = await cli([...command, '--checkpoint', kept, '--json'], 1);
          const problems = (
            JSON.parse(out) as { problems: Array<{ code: string; line?: number; at?: string; message: string }> }
          ).problems;
          expect(problems.map((p) => p.code)).toEqual(['INCONSISTENT']);
          expect(problems[0]!.line ?? Number(problems[0]!.at?.split(':').at(-1))).toBe(3);
          const where = kind === 'jsonl' ? 'line 3 \\(seq 3' : 'seq 3 \\(row 3';
          expect(problems[0]!.message).toMatch(
            new RegExp(
              `first 3 entries do not have the root .* The first changed entry is call-log ${where}, send_message by alice, message ${forked}\\): the kept checkpoints of sizes 2 and 3 pin it\\.`,
            ),
          );
        }
      } finally {
        await mb.cleanup();
      }
    });

    it('one checkpoint and an entry edited without the key: the range is the whole checkpoint, and the first entry the chain finds broken is named', async () => {
      const mb = await makeMailbox(['alice', 'bob'], { store: kind });
      try {
        await sendAll(mb, ['one', 'two', 'three']);
        const kept = join(tempDir(), 'kept.checkpoint');
        writeFileSync(kept, (await cli(['mailbox', 'checkpoint', mb.dir])).out);
        await _editCall(kind, mb, 2, (text) => text.replace('"agent":"alice"', '"agent":"bob"'));
        const { out } = await cli(['mailbox', 'verify', mb.dir, '--checkpoint', kept, '--json'], 1);
        const problems = (JSON.parse(out) as { problems: Array<{ code: string; line: number; message: string }> })
          .problems;
        expect(problems[0]).toMatchObject({ code: 'INCONSISTENT', line: 2 });
        expect(problems[0]!.message).toMatch(
          new RegExp(
            `The first changed entry is one of entries 1–3 from call-log ${kind === 'jsonl' ? 'line 1 \\(seq 1\\)' : 'seq 1 \\(row 1\\)'}\\. The first of them the log's own checks find broken is ${kind === 'jsonl' ? 'line' : 'row'} 2 \\((modified|forged)\\)\\.`,
          ),
        );
        expect(problems.slice(1).map((p) => p.line)).toContain(2);
      } finally {
        await mb.cleanup();
      }
    });
  });
}

/** The message ids of the log's sends, in order. */
async function _ids(kind: TestStore, mb: TestMailbox): Promise<string[]> {
  const texts =
    kind === 'jsonl'
      ? readFileSync(join(mb.dir, 'calls.jsonl'), 'utf8').split('\n').filter(Boolean)
      : (await withTables(kind, mb.dir, (sql) => sql('SELECT text FROM calls ORDER BY seq'))).map((r) =>
          String(r.text),
        );
  return texts.map((t) => (JSON.parse(t) as { message_ids: string[] }).message_ids[0]!);
}

/** Rewrites call `seq`'s stored text, as someone who can write the store but holds no key. */
async function _editCall(kind: TestStore, mb: TestMailbox, seq: number, edit: (text: string) => string): Promise<void> {
  if (kind === 'jsonl') {
    const path = join(mb.dir, 'calls.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[seq - 1] = edit(lines[seq - 1]!);
    return writeFileSync(path, lines.join('\n'));
  }
  await withTables(kind, mb.dir, async (sql) => {
    const [row] = await sql('SELECT text FROM calls WHERE seq = ?', [seq]);
    await sql('UPDATE calls SET text = ? WHERE seq = ?', [edit(String(row!.text)), seq]);
  });
}

describe('checkpoints: rewritten logs and keys', () => {
  it('a log rolled back and rewritten by the server itself is INCONSISTENT with the earlier checkpoint, though its chain is whole', async () => {
    const mb = await makeMailbox(['alice', 'bob']);
    await sendAll(mb, ['one', 'two']);
    const checkpoint = join(tempDir(), 'kept.checkpoint');
    writeFileSync(checkpoint, (await cli(['mailbox', 'checkpoint', mb.dir])).out);
    cutLines(join(mb.dir, 'calls.jsonl'), 1);
    cutLines(join(mb.dir, 'inbox', 'bob.jsonl'), 1);
    await sendAll(mb, ['two, rewritten', 'three']);
    expect((await cli(['mailbox', 'verify', mb.dir])).out).toMatch(/^OK: 3 call receipts/m);
    const { out } = await cli(['mailbox', 'verify', mb.dir, '--checkpoint', checkpoint], 1);
    expect(out).toMatch(
      /calls\.jsonl:0: inconsistent: The call log's first 2 entries do not have the root a checkpoint of witness\.mailbox\/.* signed/,
    );
    // One checkpoint, every entry genuine: what can be named is the range and why no more.
    expect(out).toMatch(
      /The first changed entry is one of entries 1–2 from call-log line 1 \(seq 1\)\. Every entry's receipt and chain link verify, so the log was rewritten by a holder of the mailbox key \(a fork\); a checkpoint is one root over all 2 entries and cannot say which differs/,
    );
  });

  it('--verifier-key prints the note key, and a checkpoint of another mailbox is INCONSISTENT (exit 1)', async () => {
    const mb = await makeMailbox(['alice', 'bob']);
    const other = await makeMailbox(['alice']);
    expect((await cli(['mailbox', 'checkpoint', mb.dir, '--verifier-key'])).out).toMatch(
      /^witness\.mailbox\/[0-9a-f-]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+\n$/,
    );
    const foreign = join(tempDir(), 'other.checkpoint');
    writeFileSync(foreign, (await cli(['mailbox', 'checkpoint', other.dir])).out);
    expect((await cli(['mailbox', 'verify', mb.dir, '--checkpoint', foreign], 1)).out).toMatch(
      /calls\.jsonl:0: inconsistent: the checkpoint given is not signed by the key this log is checked with .*No signature of the note is by a known key.*another log's checkpoint, or this mailbox's key \(mailbox\.json\) was replaced/,
    );
    const { out } = await cli(['verify', mb.dir, '--checkpoint', foreign, '--json'], 1);
    expect((JSON.parse(out) as { problems: Array<{ code: string }> }).problems.map((p) => p.code)).toEqual([
      'INCONSISTENT',
    ]);
    // A file that is no checkpoint at all is still the caller's to fix (exit 2).
    writeFileSync(foreign, 'not a note\n');
    for (const command of [['mailbox', 'verify'], ['verify']])
      expect((await cli([...command, mb.dir, '--checkpoint', foreign], 2)).err).toMatch(
        /The checkpoint given is not one: Not a signed note: .* Give the file `witness mailbox checkpoint DIR` printed/,
      );
  });

  it('a kept checkpoint is INCONSISTENT with a mailbox whose key in mailbox.json was replaced', async () => {
    const mb = await makeMailbox(['alice', 'bob']);
    await sendAll(mb, ['one', 'two']);
    const kept = join(tempDir(), 'kept.checkpoint');
    writeFileSync(kept, (await cli(['mailbox', 'checkpoint', mb.dir])).out);
    // The holder names another key in mailbox.json (one whose private half they hold).
    const other = await makeMailbox(['alice', 'bob']);
    await sendAll(other, ['one', 'two']);
    const config = JSON.parse(readFileSync(join(mb.dir, 'mailbox.json'), 'utf8'));
    const otherConfig = JSON.parse(readFileSync(join(other.dir, 'mailbox.json'), 'utf8'));
    writeFileSync(join(mb.dir, 'mailbox.json'), JSON.stringify({ ...config, signing: otherConfig.signing }));
    const { out } = await cli(['verify', mb.dir, '--checkpoint', kept, '--json'], 1);
    expect((JSON.parse(out) as { problems: Array<{ code: string }> }).problems.map((p) => p.code)).toContain(
      'INCONSISTENT',
    );
  });
});

describe('witness verify DIR --checkpoint', () => {
  it('applies to a mailbox folder: TRUNCATED after the last send is cut, checked with your own key directory too', async () => {
    const mb = await makeMailbox(['alice', 'bob']);
    await sendAll(mb, ['one', 'two']);
    const checkpoint = join(tempDir(), 'kept.checkpoint');
    writeFileSync(checkpoint, (await cli(['mailbox', 'checkpoint', mb.dir])).out);
    const keys = join(tempDir(), 'trusted.json');
    await cli(['keys', 'add', mb.keyPath, '--dir', keys, '--not-before', '2020-01-01T00:00:00Z', '--days', '36500']); // the log predates today
    const size = readFileSync(checkpoint, 'utf8').split('\n')[1];
    expect((await cli(['verify', mb.dir, '--checkpoint', checkpoint, '--keys', keys])).out).toMatch(
      new RegExp(`^valid: mailbox .*; the call log extends the checkpoint \\S+ \\(${size} entries\\)\\.$`, 'm'),
    );
    cutLines(join(mb.dir, 'calls.jsonl'), 1);
    cutLines(join(mb.dir, 'inbox', 'bob.jsonl'), 1);
    expect((await cli(['verify', mb.dir])).out).toMatch(/valid: mailbox/);
    const { out } = await cli(['verify', mb.dir, '--checkpoint', checkpoint, '--keys', keys, '--json'], 1);
    expect((JSON.parse(out) as { problems: Array<{ code: string }> }).problems.map((p) => p.code)).toEqual([
      'TRUNCATED',
    ]);
  });
});

describe('HMAC mailboxes: an Ed25519 key for checkpoints alone', () => {
  for (const kind of ['jsonl', 'sqlite'] as const) {
    it(`${kind}: init makes one, so a cut-off send is TRUNCATED though receipts are HMAC`, async () => {
      const mb = await makeMailbox(['alice', 'bob'], { store: kind, alg: 'hmac-sha256' });
      try {
        const config = JSON.parse(readFileSync(join(mb.dir, 'mailbox.json'), 'utf8')) as {
          signing: { alg: string };
          checkpoint_key?: { kid: string; key_path: string };
        };
        expect(config.signing.alg).toBe('hmac-sha256');
        expect(config.checkpoint_key?.key_path).toBe(`${mb.keyPath}.checkpoint.json`);
        expect(statSync(config.checkpoint_key!.key_path).mode & 0o777).toBe(0o600);
        const ids = await sendAll(mb, ['one', 'two']);
        const kept = join(tempDir(), 'kept.checkpoint');
        writeFileSync(kept, (await cli(['mailbox', 'checkpoint', mb.dir])).out);
        expect((await cli(['mailbox', 'checkpoint', mb.dir, '--verifier-key'])).out).toMatch(
          /^witness\.mailbox\/[0-9a-f-]+\+[0-9a-f]{8}\+/,
        );
        expect((await cli(['mailbox', 'verify', mb.dir, '--checkpoint', kept])).out).toMatch(/^OK: 2 call receipts/m);
        await dropLastSend(kind, mb, ids[1]!);
        for (const command of [
          ['mailbox', 'verify', mb.dir],
          ['verify', mb.dir],
        ]) {
          const { out } = await cli([...command, '--checkpoint', kept, '--json'], 1);
          expect((JSON.parse(out) as { problems: Array<{ code: string }> }).problems.map((p) => p.code)).toEqual([
            'TRUNCATED',
          ]);
        }
      } finally {
        await mb.cleanup();
      }
    });
  }

  it('a mailbox made before checkpoint keys is told the one command; --create-key makes and records it, once, and only for HMAC', async () => {
    const mb = await makeMailbox(['alice', 'bob'], { alg: 'hmac-sha256' });
    const path = join(mb.dir, 'mailbox.json');
    const { checkpoint_key: _dropped, ...older } = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    writeFileSync(path, JSON.stringify(older));
    await sendAll(mb, ['one']);
    const refused = await cli(['mailbox', 'checkpoint', mb.dir], 2);
    expect(refused.err.trim().split('\n')).toHaveLength(1);
    expect(refused.err).toMatch(
      /signs its receipts with an HMAC key, which others cannot verify, and has no checkpoint key yet; create one \(Ed25519, for checkpoints only\) with: witness mailbox checkpoint .* --create-key/,
    );
    const key = join(tempDir(), 'cp.key.json');
    const made = await cli(['mailbox', 'checkpoint', mb.dir, '--create-key', key]);
    expect(made.err).toMatch(
      /Created the checkpoint key ed25519:[0-9a-f]+ at .*cp\.key\.json \(mailbox\.json records it\); receipts stay HMAC\./,
    );
    expect(made.out).toMatch(/^witness\.mailbox\/[0-9a-f-]+\n1\n/);
    const kept = join(tempDir(), 'kept.checkpoint');
    writeFileSync(kept, made.out);
    expect((await cli(['mailbox', 'verify', mb.dir, '--checkpoint', kept])).out).toMatch(/^OK: 1 call receipts/m);
    expect((await cli(['mailbox', 'checkpoint', mb.dir, '--create-key'], 2)).err).toMatch(
      /has a checkpoint key already .*; a second would orphan the checkpoints kept so far/,
    );
    const ed = await makeMailbox(['alice']);
    expect((await cli(['mailbox', 'checkpoint', ed.dir, '--create-key'], 2)).err).toMatch(
      /signs with an Ed25519 key, which signs its checkpoints too; it needs no checkpoint key/,
    );
  });
});
