/**
 * `witness mailbox import` is all or nothing: an export whose mailbox does not verify
 * (a forged receipt, a duplicated id, reordered calls, a cursor past undelivered mail),
 * or that is not what its end line says (a line after it), or whose mailbox id would
 * name a path, leaves no folder, no staging folder and no database rows.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPool } from '../../src/attest/postgres.js';
import { openStore } from '../../src/mailbox/index.js';
import { freshDatabase } from '../attest/postgres.js';
import { cli, makeMailbox, tempDir } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

/** An export of a mailbox where bob has two messages and has read one. */
async function exported(alg?: 'hmac-sha256'): Promise<{ lines: string[]; keyPath: string; dir: string }> {
  const mb = await makeMailbox(['alice', 'bob'], alg ? { alg } : {});
  cleanups.push(mb.cleanup);
  const store = await openStore(mb.dir, { keyPath: mb.keyPath });
  await store.send('alice', { to: 'bob', body: 'one' });
  await store.send('alice', { to: 'bob', body: 'two' });
  await store.fetch('bob', { limit: 1, peek: false, tool: 'check_inbox' });
  await store.close();
  const file = join(tempDir(), 'export.jsonl');
  await cli(['mailbox', 'export', mb.dir, '--out', file]);
  return { lines: readFileSync(file, 'utf8').trimEnd().split('\n'), keyPath: mb.keyPath, dir: mb.dir };
}

const kindOf = (line: string) => Object.keys(JSON.parse(line) as object)[0];
const indexes = (lines: string[], kind: string) => lines.flatMap((l, i) => (kindOf(l) === kind ? [i] : []));

/** The end line recounted, so only the change under test is wrong. */
function recount(lines: string[], keepCheckpoint = false): string[] {
  const body = lines.filter((l) => kindOf(l) !== 'end');
  const end = lines.find((l) => kindOf(l) === 'end');
  const signed = keepCheckpoint && end ? (JSON.parse(end) as { end: { checkpoint?: string; state?: string } }).end : {};
  const n = (k: string) => indexes(body, k).length;
  return [
    ...body,
    JSON.stringify({
      end: {
        agents: n('agent'),
        calls: n('call'),
        messages: n('message'),
        cursors: n('cursor'),
        ...(signed.checkpoint ? { checkpoint: signed.checkpoint } : {}),
        ...(signed.state ? { state: signed.state } : {}),
      },
    }),
  ];
}

function edits(lines: string[]): Array<[string, string[], number, RegExp]> {
  const calls = indexes(lines, 'call');
  const messages = indexes(lines, 'message');
  const cursor = indexes(lines, 'cursor')[0]!;
  const agents = indexes(lines, 'agent');
  const forged = [...lines];
  const first = JSON.parse(lines[calls[0]!]!) as { call: string };
  const record = JSON.parse(first.call) as { receipt: { sig: string } };
  record.receipt.sig = `${record.receipt.sig.slice(0, -4)}AAAA`;
  forged[calls[0]!] = JSON.stringify({ call: JSON.stringify(record) });
  const reordered = [...lines];
  [reordered[calls[0]!], reordered[calls[1]!]] = [lines[calls[1]!]!, lines[calls[0]!]!];
  const skipped = [...lines];
  skipped[cursor] = JSON.stringify({ cursor: { agent: 'bob', messages: 2 } });
  const header = JSON.parse(lines[0]!) as { mailbox: { id: string } };
  header.mailbox.id = '../../etc';
  return [
    ['a forged receipt', forged, 1, /not the call log its checkpoint signed \(INCONSISTENT\)/],
    [
      'a duplicated message id',
      recount(
        [...lines.slice(0, messages.at(-1)! + 1), lines[messages[0]!]!, ...lines.slice(messages.at(-1)! + 1)],
        true,
      ),
      1,
      /stored twice/,
    ],
    ['reordered calls', reordered, 2, /calls are out of order \(seq 1 after seq 2\)/],
    // Read positions and token hashes are no receipt's: the end line's signed state covers them.
    ['a cursor past undelivered mail', skipped, 1, /agent and read-cursor lines are not the 3 the export signed/],
    [
      "bob's token hash replaced (another token would log in as bob)",
      lines.map((l) =>
        l.includes('"name":"bob"') ? l.replace(/"token_sha256":"[0-9a-f]+"/, `"token_sha256":"${'0'.repeat(64)}"`) : l,
      ),
      1,
      /an agent, a token hash or a cursor was changed, added or removed after the export/,
    ],
    [
      'an agent added, the end line recounted',
      recount(
        [
          ...lines.slice(0, agents.at(-1)! + 1),
          lines[agents.at(-1)!]!.replaceAll('"bob"', '"mallory"'),
          ...lines.slice(agents.at(-1)! + 1),
        ],
        true,
      ),
      1,
      /are not the 3 the export signed \(it holds 4\)/,
    ],
    [
      'the signed state dropped from the end line',
      lines.map((l) => (kindOf(l) === 'end' ? JSON.stringify({ end: { ...JSON.parse(l).end, state: undefined } }) : l)),
      1,
      /carries no signed state of its agents and read cursors/,
    ],
    ['a line after the end line', [...lines, lines[calls[0]!]!], 2, /a line comes after the end line/],
    [
      'the last call and message dropped, the end line recounted',
      recount(
        [
          ...lines.slice(0, calls.at(-1)!),
          ...lines.slice(calls.at(-1)! + 1, messages.at(-1)!),
          ...lines.slice(messages.at(-1)! + 1),
        ],
        true,
      ),
      1,
      /not the call log its checkpoint signed \(TRUNCATED\).*first missing call is call 3/,
    ],
    ['the checkpoint dropped from the end line', recount(lines), 1, /carries no checkpoint of the call log/],
    [
      'a mailbox id that is a path',
      [JSON.stringify(header), ...lines.slice(1)],
      2,
      /mailbox id "\.\.\/\.\.\/etc" is not one/,
    ],
  ];
}

async function rowsIn(url: string): Promise<number> {
  const pool = await openPool(url, { purpose: 'test', max: 1 });
  try {
    const tables = (
      await pool.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE tablename LIKE 'mailbox_%'")
    ).rows;
    let n = 0;
    for (const t of tables)
      n += Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${t.name}`)).rows[0]!.n);
    return n;
  } finally {
    await pool.end();
  }
}

describe('import is all or nothing', () => {
  it('the unedited export imports clean (the edits below are what fails)', async () => {
    const { lines, keyPath } = await exported();
    const file = join(tempDir(), 'ok.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const dir = join(tempDir(), 'imported');
    await cli(['mailbox', 'import', file, dir, '--key', keyPath]);
    expect(readdirSync(dirname(dir))).toEqual(['imported']);
  });

  for (const store of ['jsonl', 'sqlite', 'postgres'] as const) {
    it(`into ${store}: each bad export exits non-zero naming the problem and leaves nothing`, async () => {
      const { lines, keyPath } = await exported();
      for (const [what, content, code, message] of edits(lines)) {
        const file = join(tempDir(), 'edited.jsonl');
        writeFileSync(file, `${content.join('\n')}\n`);
        const dir = join(tempDir(), 'imported');
        const db = store === 'postgres' ? await freshDatabase('import') : undefined;
        if (db) cleanups.push(db.drop);
        const { err } = await cli(
          ['mailbox', 'import', file, dir, '--store', db?.url ?? store, '--key', keyPath],
          code,
        );
        expect(err, what).toMatch(message);
        expect(err, what).toMatch(/Nothing was imported/);
        expect(readdirSync(dirname(dir)), what).toEqual([]);
        if (db) expect(await rowsIn(db.url), what).toBe(0);
      }
    });
  }

  it('an HMAC mailbox: its export carries a checkpoint signed by its checkpoint key, which the import keeps and checks', async () => {
    const { lines, keyPath, dir: source } = await exported('hmac-sha256');
    const header = JSON.parse(lines[0]!) as { mailbox: { checkpoint_key?: { kid: string; public_key: string } } };
    expect(header.mailbox.checkpoint_key?.public_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const file = join(tempDir(), 'hmac.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const dir = join(tempDir(), 'imported');
    await cli(['mailbox', 'import', file, dir, '--key', keyPath]);
    // The same checkpoint key, so checkpoints kept (or cosigned) before the move still verify.
    const vkey = async (d: string) => (await cli(['mailbox', 'checkpoint', d, '--verifier-key'])).out.trim();
    expect(await vkey(dir)).toBe(await vkey(source));
    const kept = join(tempDir(), 'kept.checkpoint');
    writeFileSync(kept, (await cli(['mailbox', 'checkpoint', source])).out);
    await cli(['mailbox', 'verify', dir, '--key', keyPath, '--checkpoint', kept]);

    const calls = indexes(lines, 'call');
    const messages = indexes(lines, 'message');
    const cut = recount(
      [
        ...lines.slice(0, calls.at(-1)!),
        ...lines.slice(calls.at(-1)! + 1, messages.at(-1)!),
        ...lines.slice(messages.at(-1)! + 1),
      ],
      true,
    );
    const stripped = recount(lines);
    const keyless = JSON.parse(lines[0]!) as { mailbox: { checkpoint_key?: unknown } };
    delete keyless.mailbox.checkpoint_key;
    const ed25519Header = JSON.parse(lines[0]!) as { mailbox: { signing: { alg: string } } };
    ed25519Header.mailbox.signing.alg = 'ed25519';
    for (const [what, content, code, message] of [
      [
        'the last call and message dropped, the end line recounted',
        cut,
        1,
        /not the call log its checkpoint signed \(TRUNCATED\)/,
      ],
      ['the checkpoint dropped from the end line', stripped, 1, /carries no checkpoint of the call log/],
      [
        "the checkpoint key dropped from the header, bob's token hash replaced, the end line recounted unsigned",
        [
          JSON.stringify(keyless),
          ...recount(lines)
            .slice(1)
            .map((l) =>
              l.includes('"name":"bob"')
                ? l.replace(/"token_sha256":"[0-9a-f]+"/, `"token_sha256":"${'0'.repeat(64)}"`)
                : l,
            ),
        ],
        1,
        /its header names no checkpoint key, but this mailbox has one \(.*\.checkpoint\.json, beside its key\)/,
      ],
      [
        'a checkpoint key in an Ed25519 header',
        [JSON.stringify(ed25519Header), ...lines.slice(1)],
        2,
        /only an HMAC mailbox has/,
      ],
    ] as const) {
      const edited = join(tempDir(), 'edited.jsonl');
      writeFileSync(edited, `${content.join('\n')}\n`);
      const into = join(tempDir(), 'imported');
      const { err } = await cli(['mailbox', 'import', edited, into, '--key', keyPath], code);
      expect(err, what).toMatch(message);
      expect(readdirSync(dirname(into)), what).toEqual([]);
    }
  });
});
