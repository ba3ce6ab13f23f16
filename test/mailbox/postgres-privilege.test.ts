/**
 * Least privilege on PostgreSQL, against a real server with real roles: only
 * `mailbox migrate` (and `init` into a database without tables) runs DDL; a server
 * runs as a role given exactly the grants docs/mailbox.md lists, readers with SELECT
 * alone; a role short of a right, or a schema that is missing or old, gets one line
 * naming what to do — never "internal error" or a stack.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresNonceStore } from '../../src/attest/nonce-store-pg.js';
import { type Grant, openPool } from '../../src/attest/postgres.js';
import { isWitnessError } from '../../src/core/errors.js';
import { openStore, readConfig } from '../../src/mailbox/index.js';
import { MAILBOX_GRANTS } from '../../src/mailbox/store/postgres/db.js';
import { ADMIN_URL, freshDatabase, urlFor } from '../attest/postgres.js';
import { call, cli, ROOT, stdioClient, tempDir } from './helpers.js';

const fetchOpts = { limit: 20, peek: false, tool: 'check_inbox' as const };
const databases: Array<() => Promise<unknown>> = [];
const roles: string[] = [];
afterAll(async () => {
  // Databases first: a role cannot be dropped while a database holds its grants.
  for (const drop of databases) await drop();
  for (const name of roles) await admin(ADMIN_URL, `DROP ROLE IF EXISTS ${name}`);
});

async function admin(url: string, sql: string): Promise<void> {
  const pool = await openPool(url, { purpose: 'test PostgreSQL server', max: 1 });
  try {
    await pool.query(sql);
  } finally {
    await pool.end();
  }
}

/** A login role of its own (dropped after the test file), and the URL of `database` as that role. */
async function role(tag: string, database: string): Promise<{ name: string; url: string }> {
  const name = `witness_${tag}_${randomBytes(3).toString('hex')}`;
  await admin(ADMIN_URL, `CREATE ROLE ${name} LOGIN`);
  roles.push(name);
  const host = new URL(urlFor(database)).host || '127.0.0.1';
  return { name, url: `postgres://${name}@${host}/${database}` };
}

async function database(tag: string): Promise<{ url: string; name: string }> {
  const db = await freshDatabase(tag);
  databases.push(db.drop);
  // As on PostgreSQL 15 by default, said out loud: no role but the owner may create tables.
  await admin(db.url, 'REVOKE CREATE ON SCHEMA public FROM PUBLIC');
  return db;
}

/** The GRANTs of docs/mailbox.md's `serve` block, for `name`. */
function documentedServeGrants(name: string): string {
  const doc = readFileSync(join(ROOT, 'docs/mailbox.md'), 'utf8');
  const block = /`serve`, exactly[^\n]*\n\n```sql\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/mailbox.md has no ```sql block after "`serve`, exactly"');
  return block.replaceAll(' TO server;', ` TO ${name};`);
}

/** Each right of a GRANT text as "PRIVILEGE kind object". */
function rightsIn(sql: string): string[] {
  const rights: string[] = [];
  for (const [, privileges, sequence, objects] of sql.matchAll(/GRANT ([A-Z, ]+) ON (SEQUENCE )?([a-z_, ]+) TO/g)) {
    for (const p of privileges!.split(', '))
      for (const o of objects!.split(', ')) rights.push(`${p} ${sequence ? 'sequence' : 'table'} ${o}`);
  }
  return rights.sort();
}

const asRights = (grants: readonly Grant[]) => grants.map((g) => `${g.privilege} ${g.kind} ${g.object}`).sort();

function grantSql(grants: readonly Grant[], name: string): string {
  return grants
    .map((g) => `GRANT ${g.privilege} ON ${g.kind === 'sequence' ? 'SEQUENCE ' : ''}${g.object} TO ${name};`)
    .join('\n');
}

/** A copy of the mailbox folder whose mailbox.json names the database as another role (what a server host keeps). */
function folderAs(dir: string, url: string): string {
  const copy = join(tempDir(), 'mb');
  mkdirSync(copy);
  writeFileSync(join(copy, 'mailbox.json'), JSON.stringify({ ...readConfig(dir), database: url }, null, 2));
  return copy;
}

function expectOneLine(err: string): void {
  expect(err).not.toMatch(/internal error|\n\s+at /);
  expect(err.trimEnd().split('\n')).toHaveLength(1);
}

describe('witness mailbox on PostgreSQL with least privilege', () => {
  it('the documented grants of `serve` are what the server checks for', () => {
    expect(rightsIn(documentedServeGrants('server'))).toEqual(asRights(MAILBOX_GRANTS.serve));
  });

  it('init as a role without CREATE on public is one line naming the right; after `migrate` by the owner, the same init works', async () => {
    const db = await database('noddl');
    const low = await role('init', db.name);
    const dir = join(tempDir(), 'mb');
    const key = join(tempDir(), 'k.json');
    const refused = await cli(['mailbox', 'init', dir, '--key', key, '--store', low.url], 2);
    expectOneLine(refused.err);
    expect(refused.err).toContain(
      `The role "${low.name}" may not create or upgrade the mailbox tables (permission denied for schema public); run \`witness mailbox migrate ${low.url}\` as a role that may create tables, or grant it: GRANT CREATE ON SCHEMA public TO ${low.name}.`,
    );
    expect(existsSync(dir) || existsSync(key)).toBe(false);

    expect((await cli(['mailbox', 'migrate', db.url])).out).toMatch(/from version 0 to 3/);
    expect(JSON.parse((await cli(['mailbox', 'migrate', db.url, '--json'])).out)).toMatchObject({
      store: 'postgres',
      from: 3,
      to: 3,
    });
    await admin(db.url, grantSql(MAILBOX_GRANTS.init, low.name));
    await cli(['mailbox', 'init', dir, '--key', key, '--store', low.url]);
    expect(readConfig(dir)).toMatchObject({ store: 'postgres', database: low.url });
  });

  it('migrated by the owner, a mailbox is served (real stdio server and store API) by a role with only the serve grants, and verified, exported, checkpointed and queried by a role with SELECT alone', async () => {
    const db = await database('least');
    const server = await role('server', db.name);
    const reader = await role('reader', db.name);
    const root = tempDir();
    const owned = join(root, 'mb');
    await cli(['mailbox', 'init', owned, '--key', join(root, 'k.json'), '--store', db.url]);
    for (const agent of ['alice', 'bob']) await cli(['mailbox', 'add-agent', owned, agent]);
    await admin(db.url, documentedServeGrants(server.name));
    await admin(db.url, grantSql(MAILBOX_GRANTS.read, reader.name));
    const served = folderAs(owned, server.url);
    const read = folderAs(owned, reader.url);

    const alice = await stdioClient(served, 'alice');
    let id: string;
    try {
      id = (await call<{ id: string }>(alice.client, 'send_message', { to: 'bob', body: 'least privilege' })).id;
    } finally {
      await alice.close();
    }
    const store = await openStore(served);
    try {
      expect((await store.fetch('bob', fetchOpts)).map((m) => m.body)).toEqual(['least privilege']);
      await store.ack('bob', id);
      await store.send('bob', { to: 'alice', body: 'and back', idempotencyKey: 'k1' });
    } finally {
      await store.close();
    }

    const verified = await cli(['mailbox', 'verify', read]);
    expect(verified.out).toMatch(/^OK: \d+ call receipts, 2 messages, 0 problem/m);
    expect((await cli(['mailbox', 'status', read, id])).out).toMatch(/: acknowledged/);
    await cli(['mailbox', 'export', read, '--out', join(root, 'mb.export.jsonl')]);
    expect(readFileSync(join(root, 'mb.export.jsonl'), 'utf8')).toContain('least privilege');
    expect((await cli(['mailbox', 'checkpoint', read])).out).toMatch(/^witness\.mailbox\//);
    // The reader may not write: a server started as it is refused before it serves, naming the first right.
    const refused = await cli(['mailbox', 'serve', '--dir', read, '--agent', 'alice'], 2);
    expectOneLine(refused.err);
    expect(refused.err).toMatch(
      new RegExp(
        `The role "${reader.name}" may not INSERT into mailbox_messages, .*which serving the mailbox needs; grant it: GRANT INSERT ON mailbox_messages TO ${reader.name}; `,
      ),
    );
    // Nothing the roles ran changed the schema: the owner's tables, the owner's version row.
    const pool = await openPool(db.url, { purpose: 'test', max: 1 });
    try {
      expect(
        (
          await pool.query(
            "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tableowner <> current_user",
          )
        ).rows,
      ).toEqual([{ n: 0 }]);
    } finally {
      await pool.end();
    }
  });

  it('a role missing INSERT on mailbox_calls gets one line naming it, at start and when it is revoked while serving; nothing is stored', async () => {
    const db = await database('noinsert');
    const server = await role('noins', db.name);
    const root = tempDir();
    const owned = join(root, 'mb');
    await cli(['mailbox', 'init', owned, '--key', join(root, 'k.json'), '--store', db.url]);
    for (const agent of ['alice', 'bob']) await cli(['mailbox', 'add-agent', owned, agent]);
    await admin(db.url, grantSql(MAILBOX_GRANTS.serve, server.name));
    await admin(db.url, `REVOKE INSERT ON mailbox_calls FROM ${server.name}`);
    const served = folderAs(owned, server.url);

    const refused = await cli(['mailbox', 'serve', '--dir', served, '--agent', 'alice'], 2);
    expectOneLine(refused.err);
    expect(refused.err).toBe(
      `witness: The role "${server.name}" may not INSERT into mailbox_calls, which serving the mailbox needs; grant it: GRANT INSERT ON mailbox_calls TO ${server.name}.\n`,
    );

    await admin(db.url, `GRANT INSERT ON mailbox_calls TO ${server.name}`);
    const store = await openStore(served);
    try {
      await admin(db.url, `REVOKE INSERT ON mailbox_calls FROM ${server.name}`);
      const error = await store.send('alice', { to: 'bob', body: 'not stored' }).catch((e: unknown) => e);
      expect(isWitnessError(error, 'USAGE') && error.message).toMatch(
        /^The mailbox database refused the write: the database role was refused a right \(permission denied for table mailbox_calls\); grant it the rights docs\/mailbox\.md lists for this command, or run it as a role that has them; nothing was changed\.$/,
      );
    } finally {
      await store.close();
    }
    const verified = await cli(['mailbox', 'verify', owned]);
    expect(verified.out).toMatch(/OK: 0 call receipts, 0 messages/);
  });

  it('serve, verify and status on a database whose schema is missing or older change nothing and say to migrate', async () => {
    const db = await database('oldschema');
    const root = tempDir();
    const owned = join(root, 'mb');
    await cli(['mailbox', 'init', owned, '--key', join(root, 'k.json'), '--store', db.url]);
    await cli(['mailbox', 'add-agent', owned, 'alice']);
    await admin(db.url, "UPDATE witness_schema SET version = 2 WHERE component = 'mailbox'");
    for (const argv of [
      ['serve', '--dir', owned, '--agent', 'alice'],
      ['verify', owned],
      ['status', owned, 'msg_x'],
      ['export', owned, '--out', join(root, 'x.jsonl')],
    ]) {
      const { err } = await cli(['mailbox', ...argv], 2);
      expectOneLine(err);
      expect(err).toContain(
        `schema is at version 2, older than this Witness's 3; run \`witness mailbox migrate ${owned}\` as a role that may create tables.`,
      );
    }
    const empty = await database('noschema');
    writeFileSync(join(owned, 'mailbox.json'), JSON.stringify({ ...readConfig(owned), database: empty.url }));
    const { err } = await cli(['mailbox', 'verify', owned], 2);
    expectOneLine(err);
    expect(err).toContain("The database's mailbox schema is not there; run `witness mailbox migrate");
    const pool = await openPool(empty.url, { purpose: 'test', max: 1 });
    try {
      expect((await pool.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'")).rows).toEqual([
        { n: 0 },
      ]);
    } finally {
      await pool.end();
    }
  });

  it('migrate names what it was given when that is not a mailbox, and has nothing to do for a file mailbox', async () => {
    const { err } = await cli(['mailbox', 'migrate', join(tempDir(), 'nothing')], 2);
    expectOneLine(err);
    expect(err).toMatch(/is neither a mailbox folder \(no mailbox\.json\) nor a PostgreSQL URL/);
    const dir = join(tempDir(), 'mb');
    await cli(['mailbox', 'init', dir, '--key', join(tempDir(), 'k.json'), '--store', 'sqlite']);
    expect((await cli(['mailbox', 'migrate', dir])).out).toMatch(/^Nothing to migrate: .* is a sqlite mailbox/);
  });

  it('the nonce store, like every component, runs no DDL on a current schema: a role without CREATE uses tables its owner made, and is told in one line when they are missing', async () => {
    const db = await database('nonces');
    const low = await role('nonce', db.name);
    const refused = await PostgresNonceStore.open(low.url).catch((e: unknown) => e);
    expect(isWitnessError(refused, 'USAGE') && refused.message).toBe(
      `The role "${low.name}" may not create or upgrade the nonces tables (permission denied for schema public); run this as a role that may create tables, or grant it: GRANT CREATE ON SCHEMA public TO ${low.name}.`,
    );
    await (await PostgresNonceStore.open(db.url)).close(); // the owner creates the table
    await admin(
      db.url,
      `GRANT SELECT ON witness_schema TO ${low.name}; GRANT SELECT, INSERT, DELETE ON witness_nonces TO ${low.name}`,
    );
    const store = await PostgresNonceStore.open(low.url);
    try {
      expect(await store.claim('n1', Date.now() + 60_000)).toBe(true);
      expect(await store.claim('n1', Date.now() + 60_000)).toBe(false);
    } finally {
      await store.close();
    }
  });
});
