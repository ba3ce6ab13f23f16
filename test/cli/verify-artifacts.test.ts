/**
 * `witness verify FILE|DIR` recognises every kind of artifact by the type it declares
 * (never by a substring of its text), verifies each with one output shape and the exit
 * codes 0 / 1 / 2, still reads artifacts written before types were declared (by their
 * exact shape), and never ignores an option.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { E12_KIND } from '../../src/a2a/e12.js';
import type { ArtifactKind, Outcome } from '../../src/cli/verify/types.js';
import { recognise } from '../../src/cli/verify/read.js';
import { ARTIFACT_KINDS } from '../../src/cli/verify/kinds.js';
import { cli, sign, workspace } from '../attest/cli-helpers.js';
import { openStore, readConfig } from '../../src/mailbox/index.js';
import { makeMailbox } from '../mailbox/helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(
  JSON.parse(readFileSync(join(ROOT, 'docs', 'schemas', 'verify-report.schema.json'), 'utf8')) as object,
);

/** `witness verify … --json`: exit code and the parsed report, checked against the documented schema. */
async function verifyJson(cwd: string, ...args: string[]): Promise<{ code: number; report: Record<string, unknown> }> {
  const r = await cli(cwd, 'verify', ...args, '--json');
  const report = JSON.parse(r.out) as Record<string, unknown>;
  expect(validate(report) ? [] : validate.errors).toEqual([]);
  return { code: r.code, report };
}

const cwd = await workspace();
await sign(cwd, 'task.json', '--key', 'parent.key.json', '--output', 'task.txt');
await sign(cwd, 'path.json', '--key', 'child.key.json', '--output', 'answer.txt', '--parent', 'task.json');
await sign(
  cwd,
  'bundle.json',
  '--key',
  'child.key.json',
  '--output',
  'answer.txt',
  '--parent',
  'task.json',
  '--bundle',
);
const envelope = await cli(cwd, 'attest', 'export', 'task.json', '--format', 'dsse', '--key', 'parent.key.json');
writeFileSync(join(cwd, 'task.dsse.json'), envelope.out);

describe('each kind, recognised by its declared type, in one output shape', () => {
  it('a release receipt (type "output")', async () => {
    expect(await verifyJson(cwd, 'task.json', '--output', 'task.txt', '--keys', 'trusted.json')).toMatchObject({
      code: 0,
      report: { ok: true, type: 'output', legacy: false },
    });
  });
  it('a delegation path (type "witness/path")', async () => {
    expect(JSON.parse(readFileSync(join(cwd, 'path.json'), 'utf8')).type).toBe('witness/path');
    expect(await verifyJson(cwd, 'path.json', '--output', 'answer.txt', '--keys', 'trusted.json')).toMatchObject({
      code: 0,
      report: { ok: true, type: 'witness/path', legacy: false },
    });
  });
  it('a DSSE envelope (payloadType in-toto)', async () => {
    expect(await verifyJson(cwd, 'task.dsse.json', '--output', 'task.txt', '--keys', 'trusted.json')).toMatchObject({
      code: 0,
      report: { ok: true, type: 'application/vnd.in-toto+json' },
    });
  });
  it('an evidence bundle (type "witness/bundle"), which needs no --output and catches an edited output', async () => {
    expect(await verifyJson(cwd, 'bundle.json', '--keys', 'trusted.json')).toMatchObject({
      code: 0,
      report: { ok: true, type: 'witness/bundle' },
    });
    const bundle = JSON.parse(readFileSync(join(cwd, 'bundle.json'), 'utf8'));
    writeFileSync(
      join(cwd, 'edited.bundle.json'),
      JSON.stringify({ ...bundle, output_base64: Buffer.from('the summarY').toString('base64') }),
    );
    expect(await verifyJson(cwd, 'edited.bundle.json', '--keys', 'trusted.json')).toMatchObject({
      code: 1,
      report: { ok: false, problems: [{ code: 'OUTPUT_MISMATCH' }] },
    });
  });
  it('an E12 results file (type "witness/e12-results")', async () => {
    writeFileSync(join(cwd, 'e12.json'), JSON.stringify({ type: E12_KIND, v: 1, trials: [] }));
    expect(await verifyJson(cwd, 'e12.json')).toMatchObject({
      code: 1,
      report: {
        ok: false,
        type: E12_KIND,
        legacy: false,
        problems: expect.arrayContaining([expect.objectContaining({ code: 'MALFORMED' })]),
      },
    });
  });
  it('a mailbox folder (its mailbox.json declares format "witness-mailbox/1"), clean and tampered', async () => {
    const mb = await makeMailbox(['a', 'b']);
    expect(await verifyJson(cwd, mb.dir)).toMatchObject({
      code: 0,
      report: { ok: true, type: 'witness-mailbox/1', details: { calls: 0 } },
    });
    writeFileSync(join(mb.dir, 'calls.jsonl'), '{"not":"a record"}\n');
    expect(await verifyJson(cwd, mb.dir)).toMatchObject({
      code: 1,
      report: { ok: false, problems: [{ code: 'CORRUPT', at: 'calls.jsonl:1' }] },
    });
  });
});

describe('a mailbox checked against your own key directory', () => {
  it("passes with the mailbox's key added to --keys (one key format: witness keys add reads the mailbox key)", async () => {
    const mb = await makeMailbox(['a']);
    expect((await cli(cwd, 'keys', 'add', mb.keyPath, '--dir', 'mailboxes.json')).code).toBe(0);
    expect(await verifyJson(cwd, mb.dir, '--keys', 'mailboxes.json')).toMatchObject({
      code: 0,
      report: { ok: true, details: { key: { source: 'key directory mailboxes.json' } } },
    });
  });
  it("is UNKNOWN_KEY (exit 1) when the directory does not hold the mailbox's key", async () => {
    const mb = await makeMailbox(['a']);
    expect(await verifyJson(cwd, mb.dir, '--keys', 'trusted.json')).toMatchObject({
      code: 1,
      report: { ok: false, problems: [{ code: 'UNKNOWN_KEY' }] },
    });
  });
  it("holds your directory's validity window and revocation against every receipt of the log", async () => {
    const mb = await makeMailbox(['a', 'b']);
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    for (let i = 0; i < 3; i++) await store.send('a', { to: 'b', body: `message ${i}` });
    await store.close();
    const kid = readConfig(mb.dir).signing.kid;
    const trust = async (dir: string, ...window: string[]) =>
      expect((await cli(cwd, 'keys', 'add', mb.keyPath, '--dir', dir, ...window)).code).toBe(0);
    await trust('from-2999.json', '--not-before', '2999-01-01T00:00:00Z');
    expect(await verifyJson(cwd, mb.dir, '--keys', 'from-2999.json')).toMatchObject({
      code: 1,
      report: {
        ok: false,
        problems: [
          {
            code: 'KEY_NOT_VALID_AT_ISSUE',
            at: 'calls.jsonl:1',
            message: expect.stringMatching(
              /trusted for receipts issued from 2999.*3 receipts of the log, lines 1 to 3/,
            ),
          },
        ],
      },
    });
    for (const [dir, at, code] of [
      ['revoked-2020.json', '2020-01-01T00:00:00Z', 1],
      ['revoked-2999.json', '2999-01-01T00:00:00Z', 0],
    ] as const) {
      await trust(dir, '--not-before', '2019-01-01T00:00:00Z', '--days', '36500');
      expect((await cli(cwd, 'keys', 'revoke', kid, '--dir', dir, '--at', at)).code).toBe(0);
      const { code: exit, report } = await verifyJson(cwd, mb.dir, '--keys', dir);
      expect([exit, (report.problems as { code: string }[]).map((p) => p.code)]).toEqual([
        code,
        code === 1 ? ['REVOKED_KEY'] : [],
      ]);
    }
  });
  it('refuses --keys for an HMAC mailbox, which only its secret can check (exit 2)', async () => {
    const mb = await makeMailbox(['a'], { alg: 'hmac-sha256' });
    const r = await cli(cwd, 'verify', mb.dir, '--keys', 'trusted.json');
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/HMAC key .* --keys holds public keys/)]);
  });
});

describe('artifacts written before types were declared (legacy, recognised by their exact shape)', () => {
  it('an untyped {"path": [...]} verifies as a delegation path, marked legacy', async () => {
    const { type: _t, ...legacy } = JSON.parse(readFileSync(join(cwd, 'path.json'), 'utf8'));
    writeFileSync(join(cwd, 'old-path.json'), JSON.stringify(legacy));
    expect(await verifyJson(cwd, 'old-path.json', '--output', 'answer.txt', '--keys', 'trusted.json')).toMatchObject({
      code: 0,
      report: { ok: true, type: 'witness/path', legacy: true },
    });
    expect((await cli(cwd, 'verify', 'old-path.json', '--output', 'answer.txt', '--keys', 'trusted.json')).out).toMatch(
      /^valid: .*\(legacy: recognised by its shape/,
    );
  });
  it('an E12 file that names itself in "kind" is an E12 file, marked legacy', async () => {
    writeFileSync(join(cwd, 'old-e12.json'), JSON.stringify({ kind: E12_KIND, v: 1, trials: [] }));
    expect(await verifyJson(cwd, 'old-e12.json')).toMatchObject({
      code: 1,
      report: {
        type: E12_KIND,
        legacy: true,
        problems: expect.arrayContaining([expect.objectContaining({ code: 'MALFORMED' })]),
      },
    });
  });
  it('a path object with any other member is not taken for a legacy path', async () => {
    const { type: _t, ...legacy } = JSON.parse(readFileSync(join(cwd, 'path.json'), 'utf8'));
    writeFileSync(join(cwd, 'odd-path.json'), JSON.stringify({ ...legacy, note: 'hi' }));
    expect(await verifyJson(cwd, 'odd-path.json', '--output', 'answer.txt', '--keys', 'trusted.json')).toMatchObject({
      code: 1,
      report: {
        type: null,
        problems: [{ code: 'MALFORMED', message: expect.stringMatching(/declares none of the types/) }],
      },
    });
  });
});

describe('recognition reads the declared field, never the text', () => {
  it("a receipt whose instance id is another kind's type is still a receipt", async () => {
    await sign(
      cwd,
      'sneaky.json',
      '--key',
      'child.key.json',
      '--output',
      'answer.txt',
      '--instance',
      'witness-mailbox/1 witness/e12-results',
    );
    expect(await verifyJson(cwd, 'sneaky.json', '--output', 'answer.txt', '--keys', 'trusted.json')).toMatchObject({
      code: 0,
      report: { type: 'output' },
    });
  });
  it('a type written with a JSON escape is the same declared type', async () => {
    const text = readFileSync(join(cwd, 'path.json'), 'utf8').replace('"witness/path"', '"witness\\/path"');
    writeFileSync(join(cwd, 'escaped.json'), text);
    expect(await verifyJson(cwd, 'escaped.json', '--output', 'answer.txt', '--keys', 'trusted.json')).toMatchObject({
      code: 0,
      report: { type: 'witness/path' },
    });
  });
  it('a JSON value that declares no known type is MALFORMED (exit 1), naming the types it could declare', async () => {
    writeFileSync(join(cwd, 'other.json'), '{"type":"something/else"}');
    const { code, report } = await verifyJson(cwd, 'other.json', '--output', 'answer.txt', '--keys', 'trusted.json');
    expect(code).toBe(1);
    expect((report.problems as Array<{ message: string }>)[0]?.message).toMatch(
      /witness\/path.*witness\/bundle.*witness\/e12-results/,
    );
  });
});

describe('options that do not apply are usage errors (exit 2), never ignored', () => {
  it('--output with a bundle, which carries its output', async () => {
    const r = await cli(cwd, 'verify', 'bundle.json', '--keys', 'trusted.json', '--output', 'answer.txt');
    expect([r.code, r.err]).toEqual([
      2,
      expect.stringMatching(/--output does not apply to an evidence bundle .*\(it carries its own output\)/),
    ]);
  });
  it('--output or --now with a mailbox folder', async () => {
    const mb = await makeMailbox(['a']);
    const r = await cli(cwd, 'verify', mb.dir, '--output', 'answer.txt', '--now', '2030-01-01T00:00:00Z');
    expect([r.code, r.err]).toEqual([
      2,
      expect.stringMatching(
        /--output and --now do not apply to a mailbox folder.*Only --keys, --checkpoint, --witness, --witness-url, --witnessed-within and --json do/,
      ),
    ]);
  });
  it('--keys missing for a bundle', async () => {
    const r = await cli(cwd, 'verify', 'bundle.json');
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/needs --keys <file> for an evidence bundle/)]);
  });
});

describe('the registration point', () => {
  it('a JSONL kind added to the table is recognised by its first line and verified', async () => {
    const kind: ArtifactKind = {
      what: 'a test log',
      form: 'jsonl',
      declared: { field: 'type', values: ['test/log'] },
      uses: [],
      verify: async (): Promise<Outcome> => ({ ok: true, summary: 'valid: a test log.', problems: [], details: {} }),
    };
    writeFileSync(join(cwd, 'log.jsonl'), '{"type":"test/log","seq":1}\n{"seq":2}\n');
    const found = recognise(join(cwd, 'log.jsonl'), 'log.jsonl', [...ARTIFACT_KINDS, kind]);
    expect('kind' in found && found.kind === kind && found.type === 'test/log' && found.artifact.form === 'jsonl').toBe(
      true,
    );
    expect('outcome' in recognise(join(cwd, 'log.jsonl'), 'log.jsonl')).toBe(true); // not registered: not JSON, invalid
  });
});

it('a mailbox key file others can read is a warning on stderr, not a failure', async () => {
  const mb = await makeMailbox(['a']);
  chmodSync(mb.keyPath, 0o644);
  const r = await cli(cwd, 'verify', mb.dir);
  expect([r.code, r.err]).toEqual([0, expect.stringMatching(/^warning: .*can be read by other users/)]);
});
