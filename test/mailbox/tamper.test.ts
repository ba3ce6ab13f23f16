/**
 * Tampering with the stored files after the fact — as an agent running as the same
 * OS user could — is reported by `witness mailbox verify`, with the kind and the
 * position of each change.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { generateEd25519KeyPair, signEd25519 } from '../../src/core/ed25519.js';
import { lineHash, messageDigest, openStore, signedBytes, verifyMailbox } from '../../src/mailbox/index.js';
import { cli, makeMailbox, type TestMailbox } from './helpers.js';

let mb: TestMailbox;
let calls: string;
let inbox: string;

const read = (path: string) => readFileSync(path, 'utf8').split('\n').slice(0, -1);
const write = (path: string, lines: string[]) => writeFileSync(path, `${lines.join('\n')}\n`);
const kinds = async () =>
  (await verifyMailbox(mb.dir)).problems.map((p) => `${p.file.slice(mb.dir.length + 1)}:${p.line}:${p.kind}`);

beforeEach(async () => {
  mb = await makeMailbox(['a', 'b']);
  const store = await openStore(mb.dir);
  for (const body of ['one', 'two', 'three']) await store.send('a', { to: 'b', body }); // calls 1-3
  await store.record('a', 'whoami', { ok: true }); // 4
  await store.record('b', 'list_agents', { ok: true }); // 5
  await store.fetch('b', { limit: 1, peek: false, tool: 'check_inbox' }); // 6
  await store.record('a', 'whoami', { ok: true }); // 7
  await store.close();
  calls = join(mb.dir, 'calls.jsonl');
  inbox = join(mb.dir, 'inbox', 'b.jsonl');
});

describe('verify', () => {
  it('passes an untouched mailbox and exits 0', async () => {
    expect(await kinds()).toEqual([]);
    expect((await cli(['mailbox', 'verify', mb.dir])).out).toMatch(/^OK: 7 call receipts, 3 messages, 0 problem/m);
  });

  it('reports an edited call-log line as modified at its line', async () => {
    const lines = read(calls);
    lines[3] = lines[3]!.replace('"agent":"a"', '"agent":"b"');
    write(calls, lines);
    expect(await kinds()).toEqual(['calls.jsonl:4:modified']);
  });

  it("reports an edit to the newest line's receipt fields (outside the signed bytes, no successor to chain it) as forged", async () => {
    const lines = read(calls);
    for (const edit of [
      (l: string) => l.replace('"alg":"ed25519"', '"alg":"ed25518"'),
      (l: string) => l.replace('"alg":', '"0lg":'),
    ]) {
      write(calls, [...lines.slice(0, -1), edit(lines[6]!)]);
      expect(await kinds()).toEqual(['calls.jsonl:7:forged']);
    }
  });

  it('reports a deleted call-log line as deleted where the gap is', async () => {
    const lines = read(calls);
    lines.splice(4, 1); // seq 5
    write(calls, lines);
    expect(await kinds()).toEqual(['calls.jsonl:5:deleted']);
  });

  it('reports two swapped call-log lines as reordered', async () => {
    const lines = read(calls);
    [lines[3], lines[4]] = [lines[4]!, lines[3]!];
    write(calls, lines);
    expect(await kinds()).toEqual(['calls.jsonl:4:reordered', 'calls.jsonl:5:reordered']);
  });

  it('reports a hand-appended send with a plausible receipt as forged, and its inbox line as an orphan', async () => {
    const lines = read(calls);
    const last = JSON.parse(lines[lines.length - 1]!) as { seq: number; receipt: { kid: string } };
    const message = {
      id: 'msg_forged',
      from: 'a',
      to: 'b',
      body: 'I was never sent',
      sent_at: new Date().toISOString(),
    };
    const attacker = generateEd25519KeyPair(); // right format, right kid, wrong key
    const unsigned = {
      v: 1,
      seq: last.seq + 1,
      ts: message.sent_at,
      agent: 'a',
      tool: 'send_message',
      ok: true,
      message_ids: [message.id],
      to: ['b'],
      digests: [messageDigest(message)],
      prev: lineHash(lines[lines.length - 1]!),
    };
    const forged = {
      ...unsigned,
      receipt: { alg: 'ed25519', kid: last.receipt.kid, sig: signEd25519(attacker.privateKey, signedBytes(unsigned)) },
    };
    write(calls, [...lines, JSON.stringify(forged)]);
    write(inbox, [...read(inbox), JSON.stringify(message)]);
    expect(await kinds()).toEqual(['calls.jsonl:8:forged', 'inbox/b.jsonl:4:orphan']);
    const atEnd = (await verifyMailbox(mb.dir)).problems[0]?.message;
    expect(atEnd).toMatch(/no readable line after it can tell whether it was written without the server or changed/);
    // The server then appends after it, naming it as prev: the line stood as it is before that, so it was made, not edited.
    const store = await openStore(mb.dir);
    await store.record('a', 'whoami', { ok: true });
    await store.close();
    const [first] = (await verifyMailbox(mb.dir)).problems;
    expect(`${first?.line}:${first?.kind}`).toBe('8:forged');
    expect(first?.message).toMatch(
      /yet the line after it names this line as its prev: the line was written without the server/,
    );
  });

  it('reports a replayed copy of a genuine receipt as forged', async () => {
    const lines = read(calls);
    write(calls, [...lines, lines[0]!]);
    expect(await kinds()).toEqual(['calls.jsonl:8:forged']);
  });

  it('reports an inbox line whose body was edited as modified', async () => {
    const lines = read(inbox);
    lines[1] = lines[1]!.replace('"body":"two"', '"body":"TWO"');
    write(inbox, lines);
    expect(await kinds()).toEqual(['inbox/b.jsonl:2:modified']);
    const [problem] = (await verifyMailbox(mb.dir)).problems;
    expect(problem?.message).toMatch(/differs from what \S*calls\.jsonl:2 signed: a field of the stored message/);
  });

  it('reports a message moved to another inbox as modified, naming the inbox its send was signed for', async () => {
    const lines = read(inbox);
    write(inbox, [lines[0]!, lines[2]!]);
    write(join(mb.dir, 'inbox', 'a.jsonl'), [lines[1]!]);
    const problems = (await verifyMailbox(mb.dir)).problems;
    expect(problems.map((p) => `${p.file.slice(mb.dir.length + 1)}:${p.line}:${p.kind}`)).toContain(
      'inbox/a.jsonl:1:modified',
    );
    expect(problems.find((p) => p.file.endsWith('a.jsonl'))?.message).toMatch(
      /is in a's inbox, but \S*calls\.jsonl:2 signed its send to b: it was moved between inboxes/,
    );
  });

  it('reports a deleted inbox line at the receipt that acknowledged it', async () => {
    const lines = read(inbox);
    lines.splice(2, 1);
    write(inbox, lines);
    expect(await kinds()).toEqual(['calls.jsonl:3:deleted']);
  });

  it('reports an inbox line written without the server as an orphan', async () => {
    const fake = { id: 'msg_fake', from: 'a', to: 'b', body: 'hand-written', sent_at: new Date().toISOString() };
    write(inbox, [...read(inbox), JSON.stringify(fake)]);
    expect(await kinds()).toEqual(['inbox/b.jsonl:4:orphan']);
  });

  it('reports a damaged line as corrupt and still checks the lines after it', async () => {
    const lines = read(calls);
    lines[1] = '{"v":1,"seq":2,"ts": garbage';
    lines[5] = lines[5]!.replace('"agent":"b"', '"agent":"a"');
    write(calls, lines);
    const found = await kinds();
    expect(found).toContain('calls.jsonl:2:corrupt');
    expect(found).toContain('calls.jsonl:6:modified');
    // Neither line counts as a receipt: the count is of receipts that verify, beside the log's lines.
    expect((await cli(['mailbox', 'verify', mb.dir], 1)).out).toMatch(
      /^FAILED: 5 call receipts \(of 7 call-log lines\)/m,
    );
  });

  it('exits 1 and prints each problem as file:line: kind', async () => {
    write(inbox, [...read(inbox), JSON.stringify({ id: 'msg_x', from: 'a', to: 'b', body: 'x', sent_at: 'now' })]);
    const { out } = await cli(['mailbox', 'verify', mb.dir], 1);
    expect(out).toContain(`${inbox}:4: orphan:`);
    expect(out).toMatch(/^FAILED: .* 1 problem/m);
    const json = JSON.parse((await cli(['mailbox', 'verify', mb.dir, '--json'], 1)).out) as {
      ok: boolean;
      problems: Array<{ kind: string; line: number }>;
    };
    expect(json.ok).toBe(false);
    expect(json.problems).toEqual([expect.objectContaining({ kind: 'orphan', line: 4 })]);
  });

  it('with a pinned public key that is not the mailbox key, every receipt is forged', async () => {
    const other = generateEd25519KeyPair();
    const { out } = await cli(['mailbox', 'verify', mb.dir, '--public-key', other.publicKey, '--json'], 1);
    const report = JSON.parse(out) as { problems: Array<{ kind: string }> };
    expect(report.problems.filter((p) => p.kind === 'forged')).toHaveLength(7);
  });
});

describe('verify on the SQLite store', () => {
  it('reports an edited message row and a deleted call row by position', async () => {
    const sq = await makeMailbox(['a', 'b'], { store: 'sqlite' });
    const store = await openStore(sq.dir);
    for (const body of ['one', 'two', 'three']) await store.send('a', { to: 'b', body });
    await store.record('a', 'whoami', { ok: true });
    await store.record('a', 'whoami', { ok: true });
    await store.close();
    const db = new Database(join(sq.dir, 'mailbox.sqlite'));
    db.prepare('UPDATE messages SET text = replace(text, \'"body":"two"\', \'"body":"TWO"\')').run();
    db.prepare('DELETE FROM calls WHERE seq = 4').run();
    db.close();
    const problems = (await verifyMailbox(sq.dir)).problems.map((p) => `${p.file.split('#')[1]}:${p.line}:${p.kind}`);
    expect(problems).toEqual(['calls:4:deleted', 'messages[b]:2:modified']);
  });
});

describe('witness verify given one file of a mailbox', () => {
  it('names the folder to verify instead (exit 2), for the log, an inbox and the manifest', async () => {
    const parent = join(mb.dir, '..');
    const folder = mb.dir.slice(parent.length + 1);
    for (const file of ['calls.jsonl', join('inbox', 'b.jsonl'), 'mailbox.json']) {
      const { err } = await cli(['verify', join(folder, file)], 2, parent);
      expect(err).toContain(`is one of the files of a mailbox folder (${folder})`);
      expect(err).toMatch(new RegExp(`Verify the folder: witness verify ${folder}\\n$`));
    }
    // A file that is no part of a mailbox is still judged as evidence (exit 1).
    writeFileSync(join(parent, 'other.jsonl'), '{"a":1}\n{"b":2}\n');
    expect((await cli(['verify', 'other.jsonl'], 1, parent)).out).toMatch(/MALFORMED .*not a Witness artifact/);
  });
});
