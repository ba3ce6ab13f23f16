/**
 * The JSON Schemas in docs/schemas describe the files a real mailbox writes: every
 * file of a mailbox that went through sends, reads, a failed call and a retry
 * validates, and so does verify's --json report.
 */
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../src/mailbox/config.js';
import { openStore } from '../../src/mailbox/index.js';
import { cli, makeMailbox, ROOT, tempDir } from './helpers.js';

const schema = (name: string) =>
  JSON.parse(readFileSync(join(ROOT, 'docs', 'schemas', `mailbox-${name}.schema.json`), 'utf8')) as object;
const ajv = new Ajv2020({ allErrors: true, strict: false });
const jsonl = (path: string) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);

function expectValid(name: string, value: unknown): void {
  const validate = ajv.compile(schema(name));
  expect(validate(value) ? [] : validate.errors).toEqual([]);
}

describe('documented file formats', async () => {
  const mb = await makeMailbox(['a', 'b']);
  const store = await openStore(mb.dir);
  await store.send('a', { to: 'b', body: 'hello', idempotencyKey: 'k' });
  await store.send('a', { to: 'b', body: 'hello', idempotencyKey: 'k' });
  await store.send('a', { to: 'nobody', body: 'x' }).catch(() => undefined);
  await store.fetch('b', { limit: 10, peek: true, tool: 'check_inbox' });
  await store.fetch('b', { limit: 10, peek: false, tool: 'check_inbox' });
  await store.record('a', 'unknown_tool', { ok: false, error: { code: 'NOT_FOUND', message: 'Unknown tool "rm".' } });
  await store.close();

  it('mailbox.json matches mailbox-config.schema.json', () =>
    expectValid('config', JSON.parse(readFileSync(join(mb.dir, 'mailbox.json'), 'utf8'))));
  it("an HMAC mailbox's mailbox.json, with its checkpoint key, matches mailbox-config.schema.json", async () => {
    const hmac = await makeMailbox([], { alg: 'hmac-sha256' });
    const config = JSON.parse(readFileSync(join(hmac.dir, 'mailbox.json'), 'utf8')) as { checkpoint_key?: unknown };
    expect(config.checkpoint_key).toBeDefined();
    expectValid('config', config);
  });
  it('agents.json matches mailbox-agents.schema.json', () =>
    expectValid('agents', JSON.parse(readFileSync(join(mb.dir, 'agents.json'), 'utf8'))));
  it('every inbox line matches mailbox-message.schema.json', () => {
    for (const f of readdirSync(join(mb.dir, 'inbox')))
      for (const m of jsonl(join(mb.dir, 'inbox', f))) expectValid('message', m);
  });
  it('every call-log line matches mailbox-call.schema.json', () => {
    const lines = jsonl(join(mb.dir, 'calls.jsonl'));
    expect(lines).toHaveLength(6);
    for (const l of lines) expectValid('call', l);
  });
  it('a cursor file matches mailbox-cursor.schema.json', () =>
    expectValid('cursor', JSON.parse(readFileSync(join(mb.dir, 'cursors', 'b.json'), 'utf8'))));
  it('a read receipt that skipped damaged records, and a peek, match mailbox-call.schema.json', async () => {
    const other = await makeMailbox(['a', 'b']);
    appendFileSync(join(other.dir, 'inbox', 'b.jsonl'), 'null\n');
    const s = await openStore(other.dir);
    await s.send('a', { to: 'b', body: 'after a damaged line' });
    await s.fetch('b', { limit: 10, peek: true, tool: 'check_inbox' });
    await s.fetch('b', { limit: 10, peek: false, tool: 'check_inbox' });
    await s.close();
    const reads = jsonl(join(other.dir, 'calls.jsonl')).filter((l) => (l as { tool: string }).tool === 'check_inbox');
    expect(reads.map((l) => [(l as { skipped?: number }).skipped, (l as { peek?: boolean }).peek])).toEqual([
      [1, true],
      [1, undefined],
    ]);
    for (const l of reads) expectValid('call', l);
  });
  it('every line of the v1 fixture mailboxes (written before format v2) matches mailbox-call.schema.json too', () => {
    const fixtures = join(ROOT, 'test', 'fixtures', 'mailbox-v1');
    for (const variant of ['jsonl-ed25519', 'jsonl-hmac'])
      for (const l of jsonl(join(fixtures, variant, 'mailbox', 'calls.jsonl'))) expectValid('call', l);
  });
  it('the verify report schema names every store kind a mailbox can have', () => {
    const store = (schema('verify-report') as { properties: { store: { enum: string[] } } }).properties.store;
    expect(store.enum).toEqual([...STORE_KINDS]);
  });
  it('verify --json output matches mailbox-verify-report.schema.json', async () =>
    expectValid('verify-report', JSON.parse((await cli(['mailbox', 'verify', mb.dir, '--json'])).out)));
  it('verify --json output with problems matches it too, each problem located as witness verify prints it', async () => {
    const broken = await makeMailbox(['a', 'b']);
    appendFileSync(join(broken.dir, 'inbox', 'b.jsonl'), 'null\n');
    const report = JSON.parse((await cli(['mailbox', 'verify', broken.dir, '--json'], 1)).out);
    expect(report.problems).toContainEqual(expect.objectContaining({ code: 'CORRUPT', at: 'inbox/b.jsonl:1' }));
    expectValid('verify-report', report);
  });
  it('every line of an export matches mailbox-export.schema.json', async () => {
    const out = join(tempDir(), 'export.jsonl');
    await cli(['mailbox', 'export', mb.dir, '--out', out]);
    const lines = jsonl(out);
    expect(lines.length).toBeGreaterThan(8);
    for (const l of lines) expectValid('export', l);
    const hmac = await makeMailbox(['alice'], { alg: 'hmac-sha256' });
    const hmacOut = join(tempDir(), 'hmac-export.jsonl');
    await cli(['mailbox', 'export', hmac.dir, '--out', hmacOut]);
    const [header, ...rest] = jsonl(hmacOut) as [{ mailbox: { checkpoint_key?: unknown } }, ...unknown[]];
    expect(header.mailbox.checkpoint_key).toBeDefined();
    for (const l of [header, ...rest]) expectValid('export', l);
  });
  it("a PostgreSQL mailbox's mailbox.json matches mailbox-config.schema.json, and its database field is only allowed there", async () => {
    const pg = await makeMailbox([], { store: 'postgres' });
    try {
      const config = JSON.parse(readFileSync(join(pg.dir, 'mailbox.json'), 'utf8')) as Record<string, unknown>;
      expectValid('config', config);
      expect(ajv.compile(schema('config'))({ ...config, store: 'jsonl' })).toBe(false);
      expect(ajv.compile(schema('config'))({ ...config, database: undefined })).toBe(false);
    } finally {
      await pg.cleanup();
    }
  });
});
