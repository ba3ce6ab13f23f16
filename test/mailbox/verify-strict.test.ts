/**
 * verify parses every piece of evidence strictly and reads it streaming: a repeated
 * key in a call-log line or an inbox line is reported (a first-wins parser would
 * read another identity or body than the one signed), and a call log or inbox with
 * a line of hundreds of MiB is checked in bounded memory instead of crashing.
 */
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openStore, verifyMailbox } from '../../src/mailbox/index.js';
import { makeMailbox, type TestMailbox } from './helpers.js';

async function threeSends(store: 'jsonl' | 'sqlite' = 'jsonl'): Promise<TestMailbox> {
  const mb = await makeMailbox(['alice', 'bob', 'carol'], { store });
  const s = await openStore(mb.dir);
  for (const body of ['one', 'two', 'three']) await s.send('alice', { to: 'bob', body });
  await s.close();
  return mb;
}

const kinds = async (dir: string) =>
  (await verifyMailbox(dir)).problems.map((p) => `${p.file.slice(dir.length + 1)}:${p.line}:${p.kind}`);
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').slice(0, -1);
const write = (path: string, all: string[]) => writeFileSync(path, `${all.join('\n')}\n`);

describe('repeated keys', () => {
  it('in the newest call-log line (no successor to chain it) is reported as corrupt', async () => {
    const mb = await threeSends();
    const calls = join(mb.dir, 'calls.jsonl');
    const all = lines(calls);
    all[2] = all[2]!.replace('{"v":2,', '{"v":2,"agent":"carol",'); // JSON.parse keeps the later, signed "alice"
    write(calls, all);
    const report = await verifyMailbox(mb.dir);
    expect(await kinds(mb.dir)).toEqual(['calls.jsonl:3:corrupt', 'inbox/bob.jsonl:3:orphan']); // its message has no readable receipt now
    expect(report.problems[0]!.message).toMatch(/duplicate key "agent"/);
  });

  it('in an inbox line is reported as corrupt', async () => {
    const mb = await threeSends();
    const inbox = join(mb.dir, 'inbox', 'bob.jsonl');
    const all = lines(inbox);
    all[1] = all[1]!.replace('{"id":', '{"body":"pay mallory","id":');
    write(inbox, all);
    expect(await kinds(mb.dir)).toEqual(['inbox/bob.jsonl:2:corrupt', 'calls.jsonl:2:deleted']);
  });

  it('in a SQLite call row is reported as corrupt', async () => {
    const mb = await threeSends('sqlite');
    const db = new Database(join(mb.dir, 'mailbox.sqlite'));
    db.prepare('UPDATE calls SET text = replace(text, \'{"v":2,\', \'{"v":2,"agent":"carol",\') WHERE seq = 3').run();
    db.close();
    expect((await verifyMailbox(mb.dir)).problems.map((p) => `${p.file.split('#')[1]}:${p.line}:${p.kind}`)).toEqual([
      'calls:3:corrupt',
      'messages[bob]:3:orphan',
    ]);
  });
});

describe('evidence files that are not regular files', () => {
  it('a symbolic link for an inbox or a folder for the call log is reported, and not followed', async () => {
    const mb = await threeSends();
    const inbox = join(mb.dir, 'inbox', 'bob.jsonl');
    renameSync(inbox, `${mb.dir}.elsewhere`);
    symlinkSync(`${mb.dir}.elsewhere`, inbox);
    expect(await kinds(mb.dir)).toEqual([
      'inbox/bob.jsonl:0:corrupt',
      'calls.jsonl:1:deleted',
      'calls.jsonl:2:deleted',
      'calls.jsonl:3:deleted',
    ]);
    expect((await verifyMailbox(mb.dir)).problems[0]!.message).toMatch(/not a regular file \(a symbolic link\)/);
    const calls = join(mb.dir, 'calls.jsonl');
    rmSync(calls);
    mkdirSync(calls);
    expect(await kinds(mb.dir)).toContain('calls.jsonl:0:corrupt');
  });
});

describe('evidence larger than a string can hold (512 MiB)', () => {
  /** Appends `bytes` zero bytes (a sparse hole: no disk used) and a newline, then `tail`. */
  function appendHuge(path: string, bytes: number, tail = ''): void {
    const fd = openSync(path, 'r+');
    try {
      const size = fstatSync(fd).size;
      ftruncateSync(fd, size + bytes);
      writeSync(fd, `\n${tail}`, size + bytes);
    } finally {
      closeSync(fd);
    }
  }
  const HUGE = 600 * 1024 * 1024;

  it('a 600 MiB line in the call log is reported as corrupt, in bounded memory', async () => {
    const mb = await threeSends();
    appendHuge(join(mb.dir, 'calls.jsonl'), HUGE);
    const peak = process.resourceUsage().maxRSS;
    const report = await verifyMailbox(mb.dir);
    const grownMiB = (process.resourceUsage().maxRSS - peak) / 1024;
    console.log(`verify of a ${(HUGE / 2 ** 20).toFixed(0)} MiB call log: peak RSS grew ${grownMiB.toFixed(0)} MiB`);
    expect(report.problems).toEqual([
      expect.objectContaining({ kind: 'corrupt', line: 4, message: expect.stringMatching(/more than 64 MiB/) }),
    ]);
    expect(report).toMatchObject({ calls: 3, callLines: 4 }); // the huge line is no receipt
    expect(grownMiB).toBeLessThan(200);
  }, 120_000);

  it('a 600 MiB line in an inbox is reported as corrupt, and the lines after it are still checked', async () => {
    const mb = await threeSends();
    const inbox = join(mb.dir, 'inbox', 'bob.jsonl');
    const first = lines(inbox)[0]!;
    appendHuge(inbox, HUGE, `${first}\n`);
    const peak = process.resourceUsage().maxRSS;
    const found = await kinds(mb.dir);
    const grownMiB = (process.resourceUsage().maxRSS - peak) / 1024;
    console.log(`verify of a ${(HUGE / 2 ** 20).toFixed(0)} MiB inbox: peak RSS grew ${grownMiB.toFixed(0)} MiB`);
    expect(found).toEqual(['inbox/bob.jsonl:4:corrupt', 'inbox/bob.jsonl:5:forged']);
    expect(grownMiB).toBeLessThan(200);
  }, 120_000);
});
