/**
 * `witness sim --sign` and `witness verify RESULTS.jsonl` in process: the options a
 * results file takes, the ones it refuses (never ignores), and what is printed.
 */
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { cli, sign, workspace } from '../attest/cli-helpers.js';

const validate = new Ajv2020({ allErrors: true, strict: false }).compile(
  JSON.parse(
    readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'schemas', 'verify-report.schema.json'), 'utf8'),
  ) as object,
);

/** A workspace with a signed smoke sweep in r.jsonl, signed by child.key.json (trusted). */
async function signedSweep(...extra: string[]) {
  const cwd = await workspace();
  const r = await cli(cwd, 'sim', '--quiet', '--runs', '2', '--out', 'r.jsonl', '--sign', 'child.key.json', ...extra);
  expect(r.code, r.err).toBe(0);
  return cwd;
}

describe('witness sim --sign', () => {
  it('says which key signed the file and where its checkpoint is', async () => {
    const cwd = await workspace();
    const r = await cli(cwd, 'sim', '--quiet', '--runs', '2', '--out', 'r.jsonl', '--sign', 'child.key.json');
    expect(r.err).toMatch(/Signed with key ed25519:[0-9a-f]{16}; checkpoint: .*r\.jsonl\.checkpoint\.json/);
  });
  it('writes the same signed bytes with worker threads as in one thread', async () => {
    const cwd = await workspace();
    for (const [out, workers] of [
      ['one.jsonl', '1'],
      ['two.jsonl', '2'],
    ]) {
      expect(
        (
          await cli(
            cwd,
            'sim',
            '--quiet',
            '--runs',
            '30',
            '--out',
            out as string,
            '--workers',
            workers as string,
            '--sign',
            'child.key.json',
          )
        ).code,
      ).toBe(0);
    }
    expect(readFileSync(join(cwd, 'two.jsonl'), 'utf8')).toBe(readFileSync(join(cwd, 'one.jsonl'), 'utf8'));
    expect((await cli(cwd, 'verify', 'two.jsonl', '--keys', 'trusted.json')).code).toBe(0);
  });
  it('leaves a signed file readable by witness report', async () => {
    const cwd = await signedSweep();
    const r = await cli(cwd, 'report', 'r.jsonl', '--json');
    expect([r.code, JSON.parse(r.out).runs, r.err]).toEqual([0, 8, '']);
  });
  it('refuses --sign-lines without --sign', async () => {
    const r = await cli(await workspace(), 'sim', '--quiet', '--sign-lines');
    expect([r.code, r.err.trim()]).toEqual([2, expect.stringMatching(/^witness: --sign-lines needs --sign KEY/)]);
  });
  it('refuses a key file that is not one, in one line', async () => {
    const cwd = await workspace();
    const r = await cli(cwd, 'sim', '--quiet', '--sign', 'answer.txt');
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });
  it('refuses to resume a signed file without --sign', async () => {
    const cwd = await signedSweep();
    const r = await cli(cwd, 'sim', '--quiet', '--runs', '2', '--out', 'r.jsonl');
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/is a signed results file .* resume it with --sign/)]);
  });
});

describe('witness verify RESULTS.jsonl', () => {
  it('against a key directory holding none of its keys, says so in one line (exit 1), not once per line', async () => {
    const cwd = await signedSweep('--sign-lines');
    expect((await cli(cwd, 'keys', 'new', '--deployer', 'org-other', '--out', 'other.key.json')).code).toBe(0);
    expect((await cli(cwd, 'keys', 'add', 'other.key.json', '--dir', 'other.json', '--days', '10')).code).toBe(0);
    const r = await cli(cwd, 'verify', 'r.jsonl', '--keys', 'other.json');
    expect(r.code).toBe(1);
    expect(r.out.trim().split('\n')).toEqual([
      `invalid: results ${join(cwd, 'r.jsonl')}: 8 lines, signed by a key your key directory does not hold.`,
      expect.stringMatching(
        /^ {2}UNKNOWN_KEY +the file is signed by key ed25519:[0-9a-f]{16}, which your key directory does not hold: give the directory that trusts its signer/,
      ),
    ]);
  });
  it('prints valid with what it checked, exit 0', async () => {
    const cwd = await signedSweep();
    const r = await cli(cwd, 'verify', 'r.jsonl', '--keys', 'trusted.json');
    expect([r.code, r.out]).toEqual([
      0,
      expect.stringMatching(
        /^valid: results .*r\.jsonl: 8 of 8 planned runs of experiment "smoke" on 8 lines, 1 signature verified/,
      ),
    ]);
  });
  it('accepts the checkpoint file in place of the results', async () => {
    const cwd = await signedSweep();
    expect((await cli(cwd, 'verify', 'r.jsonl.checkpoint.json', '--keys', 'trusted.json')).code).toBe(0);
  });
  it('lists each problem with its line and code, exit 1; --json gives the same as data', async () => {
    const cwd = await signedSweep();
    const lines = readFileSync(join(cwd, 'r.jsonl'), 'utf8').split('\n');
    lines[2] = (lines[2] as string).replace(/"decisions":(\d+)/, (_, n) => `"decisions":${Number(n) + 1}`);
    writeFileSync(join(cwd, 'r.jsonl'), lines.join('\n'));
    const text = await cli(cwd, 'verify', 'r.jsonl', '--keys', 'trusted.json');
    expect([text.code, text.out]).toEqual([
      1,
      expect.stringMatching(/^invalid: [^\n]*\n {2}CONTENT_MISMATCH +\[line 3\] the line's content/),
    ]);
    const json = JSON.parse((await cli(cwd, 'verify', 'r.jsonl', '--keys', 'trusted.json', '--json')).out);
    expect(json).toMatchObject({
      ok: false,
      type: 'witness/sim-record',
      problems: [{ code: 'CONTENT_MISMATCH', at: 'line 3' }],
    });
    expect(validate(json), JSON.stringify(validate.errors)).toBe(true);
  });
  it('with --sign-lines, verifies every line signature too', async () => {
    const cwd = await signedSweep('--sign-lines');
    const r = await cli(cwd, 'verify', 'r.jsonl', '--keys', 'trusted.json', '--json');
    expect(JSON.parse(r.out)).toMatchObject({ ok: true, details: { signatures: 9 } });
  });
  it('needs --keys', async () => {
    const cwd = await signedSweep();
    const r = await cli(cwd, 'verify', 'r.jsonl');
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/needs --keys <file> for a signed results file/)]);
  });
  it('refuses the options that do not apply to a results file, naming each', async () => {
    const cwd = await signedSweep();
    const r = await cli(cwd, 'verify', 'r.jsonl', '--keys', 'trusted.json', '--output', 'answer.txt', '--skew', '5');
    expect([r.code, r.err]).toEqual([
      2,
      expect.stringMatching(
        /--output and --skew do not apply to a signed results file \(a results file carries its own content; results have no validity window\)/,
      ),
    ]);
  });
  it('refuses --cassette and --checkpoint for a receipt', async () => {
    const cwd = await workspace();
    await sign(cwd, 'receipt.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const r = await cli(
      cwd,
      'verify',
      'receipt.json',
      '--output',
      'answer.txt',
      '--keys',
      'trusted.json',
      '--cassette',
      'answer.txt',
    );
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/--cassette does not apply to a release receipt/)]);
  });
  it('refuses --allow-partial for a receipt: it applies to signed results only', async () => {
    const cwd = await workspace();
    await sign(cwd, 'receipt.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const r = await cli(
      cwd,
      'verify',
      'receipt.json',
      '--output',
      'answer.txt',
      '--keys',
      'trusted.json',
      '--allow-partial',
    );
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/--allow-partial does not apply to a release receipt/)]);
  });
  it('says an unsigned results file declares no type it could verify, exit 1', async () => {
    const cwd = await workspace();
    await cli(cwd, 'sim', '--quiet', '--runs', '1', '--out', 'plain.jsonl');
    const r = await cli(cwd, 'verify', 'plain.jsonl', '--keys', 'trusted.json', '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).problems).toEqual([
      {
        code: 'MALFORMED',
        message: expect.stringMatching(/a signed results file \(receipt\.type: "witness\/sim-record"\)/),
      },
    ]);
  });
  it('verifies a results file of one line (one JSON document)', async () => {
    const cwd = await workspace();
    expect(
      (
        await cli(
          cwd,
          'sim',
          '--quiet',
          '--runs',
          '1',
          '--honest',
          '3',
          '--byzantine',
          '0',
          '--honest-policy',
          'plurality',
          '--out',
          'one.jsonl',
          '--sign',
          'child.key.json',
        )
      ).code,
    ).toBe(0);
    const r = await cli(cwd, 'verify', 'one.jsonl', '--keys', 'trusted.json', '--json');
    expect([r.code, JSON.parse(r.out).details.lines]).toEqual([0, 1]);
  });
  it('a missing --checkpoint file is a usage error naming it', async () => {
    const cwd = await signedSweep();
    const r = await cli(cwd, 'verify', 'r.jsonl', '--keys', 'trusted.json', '--checkpoint', 'nope.json');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/nope\.json/);
  });
  it('reads a file larger than one JSON document may be as JSONL, by its first line, and streams it', async () => {
    const cwd = await signedSweep();
    const file = join(cwd, 'r.jsonl');
    const lineCount = readFileSync(file, 'utf8').split('\n').length - 1;
    // A sparse tail without a newline, to 600 MB: longer than any V8 string, so the file cannot be read whole.
    truncateSync(file, 600 * 1024 * 1024);
    const r = await cli(cwd, 'verify', 'r.jsonl', '--keys', 'trusted.json', '--json');
    expect(r.code, r.err).toBe(1);
    const report = JSON.parse(r.out);
    expect(report).toMatchObject({
      type: 'witness/sim-record',
      details: { type: 'sim-results', runs: 8, lines: lineCount },
    });
    expect(report.problems).toEqual([
      { code: 'MALFORMED', message: expect.stringMatching(/last line is cut off/), at: `line ${lineCount + 1}` },
    ]);
  });
  it('says what a file too large for a JSON document is not, when its first line declares nothing', async () => {
    const cwd = await workspace();
    writeFileSync(join(cwd, 'zeros.bin'), '');
    truncateSync(join(cwd, 'zeros.bin'), 300 * 1024 * 1024);
    const r = await cli(cwd, 'verify', 'zeros.bin', '--keys', 'trusted.json');
    expect([r.code, r.out]).toEqual([
      1,
      expect.stringMatching(
        /MALFORMED +zeros\.bin is 314572800 bytes, more than a JSON evidence document may be .* no JSONL artifact either/,
      ),
    ]);
  });
});

describe('witness verify on some shards of a signed sharded sweep', () => {
  /** A workspace with shards 1/2 and 2/2 of a signed smoke sweep (40 runs), shard 1 merged alone, and both merged. */
  async function shardedSweep() {
    const cwd = await workspace();
    for (const i of ['1', '2']) {
      const r = await cli(
        cwd,
        'sim',
        '--quiet',
        '--out',
        `p${i}.jsonl`,
        '--shard',
        `${i}/2`,
        '--sign',
        'child.key.json',
      );
      expect(r.code, r.err).toBe(0);
    }
    expect((await cli(cwd, 'sim', 'merge', 'p1.jsonl', 'p2.jsonl', '-o', 'all.jsonl')).code).toBe(0);
    expect((await cli(cwd, 'sim', 'merge', 'p1.jsonl', '-o', 'one.jsonl')).code).toBe(0);
    return cwd;
  }
  it('is valid with every shard, and says nothing partial', async () => {
    const cwd = await shardedSweep();
    const r = await cli(cwd, 'verify', 'all.jsonl', '--keys', 'trusted.json');
    expect([r.code, r.out]).toEqual([
      0,
      expect.stringMatching(
        /^valid: results .*all\.jsonl: 40 of 40 planned runs of experiment "smoke", shards 1, 2 of 2 /,
      ),
    ]);
  });
  it('is invalid with shard 2 missing (shard 1 merged alone, or its own file): SHARD_MISSING names it, exit 1', async () => {
    const cwd = await shardedSweep();
    for (const file of ['one.jsonl', 'p1.jsonl']) {
      const r = await cli(cwd, 'verify', file, '--keys', 'trusted.json', '--json');
      expect(r.code, r.out).toBe(1);
      const report = JSON.parse(r.out) as {
        ok: boolean;
        problems: { code: string; message: string }[];
        details: { partial: boolean; shards: unknown };
      };
      expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
      expect(report.ok).toBe(false);
      expect(report.problems.map((p) => p.code)).toEqual(['SHARD_MISSING']);
      expect(report.problems[0]?.message).toMatch(/^shard 2 of 2 is not in this file, which holds shard 1 of 2/);
      expect(report.details).toMatchObject({ partial: false, shards: { count: 2, present: [1], missing: [2] } });
    }
  });
  it('is invalid with the lines and checkpoint of shard 2 removed from the merged file', async () => {
    const cwd = await shardedSweep();
    const lines = readFileSync(join(cwd, 'all.jsonl'), 'utf8').split('\n').filter(Boolean);
    writeFileSync(
      join(cwd, 'cut.jsonl'),
      lines
        .filter((l) => (JSON.parse(l) as { seq: number }).seq % 2 === 0)
        .map((l) => `${l}\n`)
        .join(''),
    );
    const cp = JSON.parse(readFileSync(join(cwd, 'all.jsonl.checkpoint.json'), 'utf8')) as {
      checkpoints: { shard: { index: number } }[];
    };
    cp.checkpoints = cp.checkpoints.filter((c) => c.shard.index === 1);
    writeFileSync(join(cwd, 'cut.jsonl.checkpoint.json'), JSON.stringify(cp));
    const r = await cli(cwd, 'verify', 'cut.jsonl', '--keys', 'trusted.json');
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/^invalid: /);
    expect(r.out).toMatch(/SHARD_MISSING +shard 2 of 2 is not in this file/);
  });
  it("with only shard 2's checkpoint removed, its lines are one CHECKPOINT_MISSING, not a problem per line, even with --allow-partial", async () => {
    const cwd = await shardedSweep();
    const cp = JSON.parse(readFileSync(join(cwd, 'all.jsonl.checkpoint.json'), 'utf8')) as {
      checkpoints: { shard: { index: number } }[];
    };
    cp.checkpoints = cp.checkpoints.filter((c) => c.shard.index === 1);
    writeFileSync(join(cwd, 'all.jsonl.checkpoint.json'), JSON.stringify(cp));
    for (const partial of [[], ['--allow-partial']]) {
      const r = await cli(cwd, 'verify', 'all.jsonl', '--keys', 'trusted.json', '--json', ...partial);
      expect(r.code, r.out).toBe(1);
      const { problems } = JSON.parse(r.out) as { problems: { code: string; message: string; at?: string }[] };
      expect(problems.map((p) => p.code)).toEqual(
        partial.length ? ['CHECKPOINT_MISSING'] : ['CHECKPOINT_MISSING', 'SHARD_MISSING'],
      );
      expect(problems[0]).toMatchObject({ at: 'line 2' });
      expect(problems[0]?.message).toMatch(
        /belongs to shard 2\/2, which no checkpoint of this file covers, as do 19 more lines after it/,
      );
    }
  });
  it("a kept checkpoint of a shard the file does not hold is SHARD_MISSING naming it, with --allow-partial too; each shard's own passes", async () => {
    const cwd = await shardedSweep();
    for (const i of ['1', '2'])
      expect((await cli(cwd, 'sim', 'checkpoint', `p${i}.jsonl`, '-o', `k${i}.txt`)).code).toBe(0);
    writeFileSync(
      join(cwd, 'k12.txt'),
      readFileSync(join(cwd, 'k1.txt'), 'utf8') + readFileSync(join(cwd, 'k2.txt'), 'utf8'),
    );
    const partialWith = (kept: string) =>
      cli(cwd, 'verify', 'p1.jsonl', '--keys', 'trusted.json', '--allow-partial', '--checkpoint', kept);
    const r = await partialWith('k12.txt');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /SHARD_MISSING +the kept checkpoint 2 \(\S*k12\.txt\) is of shard 2\/2, which this file does not hold/,
    );
    const own = await partialWith('k1.txt');
    expect([own.code, own.out]).toEqual([
      0,
      expect.stringMatching(/; it extends the checkpoint k1\.txt \(\d+ lines of shard 1\)\.$/m),
    ]);
    const both = await cli(cwd, 'verify', 'all.jsonl', '--keys', 'trusted.json', '--checkpoint', 'k12.txt');
    expect(both.code, both.out).toBe(0);
  });
  it('a kept checkpoint with Windows line endings, or with no signature, is MALFORMED saying which', async () => {
    const cwd = await shardedSweep();
    expect((await cli(cwd, 'sim', 'checkpoint', 'all.jsonl', '-o', 'kept.txt')).code).toBe(0);
    writeFileSync(join(cwd, 'crlf.txt'), readFileSync(join(cwd, 'kept.txt'), 'utf8').replaceAll('\n', '\r\n'));
    writeFileSync(join(cwd, 'bare.txt'), `${readFileSync(join(cwd, 'kept.txt'), 'utf8').split('\n\n')[0]}\n`);
    const crlf = await cli(cwd, 'verify', 'all.jsonl', '--keys', 'trusted.json', '--checkpoint', 'crlf.txt');
    expect([crlf.code, crlf.out]).toEqual([
      1,
      expect.stringMatching(/MALFORMED +\S*crlf\.txt has Windows line endings \(CRLF\)/),
    ]);
    const bare = await cli(cwd, 'verify', 'all.jsonl', '--keys', 'trusted.json', '--checkpoint', 'bare.txt');
    expect([bare.code, bare.out]).toEqual([
      1,
      expect.stringMatching(/MALFORMED +the kept checkpoint 1 \(\S*bare\.txt\) has no signature after its text/),
    ]);
  });
  it('is valid with --allow-partial, and the verdict says partial', async () => {
    const cwd = await shardedSweep();
    const r = await cli(cwd, 'verify', 'one.jsonl', '--keys', 'trusted.json', '--allow-partial');
    expect([r.code, r.out]).toEqual([
      0,
      expect.stringMatching(
        /^valid \(partial: shards 1 of 2\): results .*one\.jsonl: 20 of 20 planned runs of experiment "smoke", shards 1 of 2 /,
      ),
    ]);
  });
});

describe('witness sim checkpoint, and witness verify --checkpoint with the checkpoint kept', () => {
  it('prints each chain tree head as a C2SP checkpoint signed under its origin', async () => {
    const cwd = await signedSweep();
    const r = await cli(cwd, 'sim', 'checkpoint', 'r.jsonl');
    expect(r.code, r.err).toBe(0);
    const lines = readFileSync(join(cwd, 'r.jsonl'), 'utf8').split('\n').filter(Boolean).length;
    expect(r.out).toMatch(
      new RegExp(
        `^witness\\.sim/[0-9a-f]{16}/all\\n${lines}\\n[A-Za-z0-9+/]{43}=\\n\\n— witness\\.sim/[0-9a-f]{16}/all [A-Za-z0-9+/]+=*\\n$`,
      ),
    );
  });
  it('verifies the file it was kept from, exit 0', async () => {
    const cwd = await signedSweep();
    expect((await cli(cwd, 'sim', 'checkpoint', 'r.jsonl', '-o', 'kept.txt')).code).toBe(0);
    const r = await cli(cwd, 'verify', 'r.jsonl', '--keys', 'trusted.json', '--checkpoint', 'kept.txt');
    const lines = readFileSync(join(cwd, 'r.jsonl'), 'utf8').split('\n').filter(Boolean).length;
    // The verdict says what it held the file to.
    expect([r.code, r.out]).toEqual([
      0,
      expect.stringMatching(
        new RegExp(`^valid: .*; it extends the checkpoint kept\\.txt \\(${lines} lines\\)\\.$`, 'm'),
      ),
    ]);
    const plain = await cli(cwd, 'verify', 'r.jsonl', '--keys', 'trusted.json');
    expect(plain.out).not.toMatch(/extends/);
  });
  it('reports the file cut short as TRUNCATED, exit 1', async () => {
    const cwd = await signedSweep();
    expect((await cli(cwd, 'sim', 'checkpoint', 'r.jsonl', '-o', 'kept.txt')).code).toBe(0);
    const lines = readFileSync(join(cwd, 'r.jsonl'), 'utf8').split('\n').filter(Boolean);
    writeFileSync(
      join(cwd, 'r.jsonl'),
      lines
        .slice(0, -3)
        .map((l) => `${l}\n`)
        .join(''),
    );
    const r = await cli(cwd, 'verify', 'r.jsonl', '--keys', 'trusted.json', '--checkpoint', 'kept.txt');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      new RegExp(
        `TRUNCATED +the file's chain holds ${lines.length - 3} lines and the kept checkpoint signed ${lines.length}`,
      ),
    );
  });
});
