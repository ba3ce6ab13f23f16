/**
 * The JSONL call-log reader the witness submitter builds its tree from: every line's
 * leaf equals `callLeaf` of its text (what verify and `mailbox checkpoint` hash), across
 * read chunks, a line longer than a chunk, a line that is not UTF-8, empty lines and a
 * torn last line; reads go on from where they stopped, and a log rewritten under the
 * reader starts over and says so. A property test appends random logs in random pieces
 * (torn writes included) and reads after each with chunks of a few bytes.
 */
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonlCallLogReader } from '../../src/mailbox/call-log-reader.js';
import { callLeaf } from '../../src/mailbox/checkpoint.js';

/** The leaves a reader returns, one 32-byte hash each, as hex. */
function hexLeaves(packed: Buffer): string[] {
  const out: string[] = [];
  for (let at = 0; at < packed.length; at += 32) out.push(packed.subarray(at, at + 32).toString('hex'));
  return out;
}

const expected = (lines: Array<string | Buffer>) =>
  lines.map((l) => callLeaf(typeof l === 'string' ? l : l.toString('utf8')).toString('hex'));

const mailboxDir = () => mkdtempSync(join(tmpdir(), 'call-log-reader-'));

describe('the JSONL call-log reader', () => {
  it('gives callLeaf of every line across chunks, a line longer than a chunk, a non-UTF-8 line and empty lines', async () => {
    const dir = mailboxDir();
    const lines: Array<string | Buffer> = [];
    // About 3 MB of ordinary lines, so reads cross the 1 MiB chunk boundaries at arbitrary places.
    for (let i = 0; i < 9000; i++)
      lines.push(JSON.stringify({ seq: i, body: 'é€'.repeat(i % 97) + 'x'.repeat(i % 331) }));
    lines.push(`{"long":"${'y'.repeat(2_500_000)}"}`); // longer than a chunk: the buffer grows
    lines.push(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])); // not UTF-8: hashed as its text, as verify reads it
    lines.push('{"after":"the damaged line"}');
    const bytes = Buffer.concat(
      lines.flatMap((l, i) => [
        typeof l === 'string' ? Buffer.from(l) : l,
        Buffer.from(i % 1000 === 7 ? '\n\n' : '\n'),
      ]),
    );
    writeFileSync(join(dir, 'calls.jsonl'), bytes);
    const reader = jsonlCallLogReader(dir);
    const first = await reader.read();
    expect(first.rewound).toBe(false);
    expect(hexLeaves(first.leaves)).toEqual(expected(lines));

    // A torn last line is not read; once finished, it is, and only the new lines come back.
    appendFileSync(join(dir, 'calls.jsonl'), '{"torn":');
    expect((await reader.read()).leaves.length).toBe(0);
    appendFileSync(join(dir, 'calls.jsonl'), 'true}\n{"next":1}\n');
    const more = await reader.read();
    expect(more.rewound).toBe(false);
    expect(hexLeaves(more.leaves)).toEqual(expected(['{"torn":true}', '{"next":1}']));
  });

  it('starts over, saying so, when the last line it read is no longer there', async () => {
    const dir = mailboxDir();
    const path = join(dir, 'calls.jsonl');
    writeFileSync(path, '{"a":1}\n{"b":2}\n');
    const reader = jsonlCallLogReader(dir);
    expect(hexLeaves((await reader.read()).leaves)).toEqual(expected(['{"a":1}', '{"b":2}']));
    writeFileSync(path, '{"a":1}\n{"B":2}\n{"c":3}\n'); // the second line changed: a fork
    const again = await reader.read();
    expect(again.rewound).toBe(true);
    expect(hexLeaves(again.leaves)).toEqual(expected(['{"a":1}', '{"B":2}', '{"c":3}']));
  });
});

describe('the JSONL call-log reader, any log in any pieces', () => {
  const line = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 40 }).map((t) => Buffer.from(JSON.stringify({ t }))),
    fc.uint8Array({ minLength: 1, maxLength: 30 }).map((b) => Buffer.from(b.map((x) => (x === 10 ? 32 : x)))),
    fc.constant(Buffer.alloc(0)), // an empty line: no leaf
  );
  it('returns, over all its reads, callLeaf of exactly the complete non-empty lines, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 25 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.integer({ min: 1, max: 17 }),
        async (lines, cuts, chunkBytes) => {
          const dir = mailboxDir();
          const path = join(dir, 'calls.jsonl');
          const bytes = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
          const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const reader = jsonlCallLogReader(dir, { chunkBytes });
          const got: string[] = [];
          let written = 0;
          for (const end of [...at, bytes.length]) {
            appendFileSync(path, bytes.subarray(written, end));
            written = end;
            const read = await reader.read();
            expect(read.rewound).toBe(false);
            got.push(...hexLeaves(read.leaves));
          }
          expect(got).toEqual(expected(lines.filter((l) => l.length > 0)));
        },
      ),
      { numRuns: 150 },
    );
  });
});
