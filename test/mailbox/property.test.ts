/**
 * Properties, checked with fast-check on real stores (the seed is printed on failure
 * so a run can be replayed):
 * - any sequence of sends and reads from two store instances on one directory
 *   delivers every message exactly once, in send order per recipient, and verifies;
 * - any single edit, swap or (non-final) deletion of a stored line is reported;
 * - a name passes validation exactly when it matches the documented pattern, and a
 *   valid name never leads outside the inbox folder.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AGENT_NAME_PATTERN, agentNameProblem, openStore, verifyMailbox } from '../../src/mailbox/index.js';
import { makeMailbox } from './helpers.js';

type Op =
  | { kind: 'send'; via: 0 | 1; from: 'a' | 'b'; to: 'a' | 'b'; body: string }
  | { kind: 'read'; via: 0 | 1; who: 'a' | 'b'; limit: number; peek: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('send' as const),
    via: fc.constantFrom(0 as const, 1 as const),
    from: fc.constantFrom('a' as const, 'b' as const),
    to: fc.constantFrom('a' as const, 'b' as const),
    body: fc.string({ unit: 'grapheme', maxLength: 40 }),
  }),
  fc.record({
    kind: fc.constant('read' as const),
    via: fc.constantFrom(0 as const, 1 as const),
    who: fc.constantFrom('a' as const, 'b' as const),
    limit: fc.integer({ min: 1, max: 4 }),
    peek: fc.boolean(),
  }),
);

describe('mailbox properties', () => {
  it('two instances on one directory deliver every message exactly once, in order, and verify clean', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 25 }), async (ops) => {
        const mb = await makeMailbox(['a', 'b']);
        const stores = [await openStore(mb.dir), await openStore(mb.dir)] as const;
        const pending: Record<'a' | 'b', string[]> = { a: [], b: [] };
        const delivered: Record<'a' | 'b', string[]> = { a: [], b: [] };
        try {
          for (const op of ops) {
            if (op.kind === 'send')
              pending[op.to].push((await stores[op.via].send(op.from, { to: op.to, body: op.body })).id);
            else {
              const got = (
                await stores[op.via].fetch(op.who, { limit: op.limit, peek: op.peek, tool: 'check_inbox' })
              ).map((m) => m.id);
              expect(got).toEqual(pending[op.who].slice(0, op.limit));
              if (!op.peek) delivered[op.who].push(...pending[op.who].splice(0, got.length));
            }
          }
          for (const who of ['a', 'b'] as const) {
            const rest = (await stores[0].fetch(who, { limit: 100, peek: false, tool: 'check_inbox' })).map(
              (m) => m.id,
            );
            expect([...delivered[who], ...rest]).toEqual([...delivered[who], ...pending[who]]);
          }
        } finally {
          await Promise.all(stores.map((s) => s.close()));
        }
        expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
      }),
      { numRuns: 15, verbose: true },
    );
  }, 120_000);

  it('any single edit, swap or non-final deletion of a stored line is reported', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const store = await openStore(mb.dir);
    for (let i = 0; i < 4; i++) await store.send(i % 2 ? 'a' : 'b', { to: i % 2 ? 'b' : 'a', body: `m${i}` });
    await store.fetch('b', { limit: 1, peek: false, tool: 'check_inbox' });
    await store.record('a', 'whoami', { ok: true });
    await store.close();
    const files = ['calls.jsonl', 'inbox/a.jsonl', 'inbox/b.jsonl'].map((f) => join(mb.dir, f));
    const original = files.map((f) => readFileSync(f, 'utf8'));
    const mutation = fc.record({
      file: fc.integer({ min: 0, max: 2 }),
      kind: fc.constantFrom('edit', 'swap', 'delete'),
      at: fc.nat(),
      char: fc.nat(),
      to: fc.constantFrom('0', 'x', '"', '}', ' '),
    });
    await fc.assert(
      fc.asyncProperty(mutation, async (m) => {
        const lines = original[m.file]!.split('\n').slice(0, -1);
        const i = m.at % lines.length;
        if (m.kind === 'edit') {
          const line = lines[i]!;
          const c = m.char % line.length;
          fc.pre(line[c] !== m.to);
          lines[i] = line.slice(0, c) + m.to + line.slice(c + 1);
        } else if (m.kind === 'swap') {
          fc.pre(lines.length > 1);
          const j = (i + 1) % lines.length;
          [lines[i], lines[j]] = [lines[j]!, lines[i]!];
        } else {
          fc.pre(m.file !== 0 || i < lines.length - 1); // dropping the newest log line is a documented blind spot
          lines.splice(i, 1);
        }
        writeFileSync(files[m.file]!, lines.length ? `${lines.join('\n')}\n` : '');
        try {
          expect((await verifyMailbox(mb.dir)).problems.length).toBeGreaterThan(0);
        } finally {
          writeFileSync(files[m.file]!, original[m.file]!);
        }
      }),
      { numRuns: 150, verbose: true },
    );
  }, 120_000);

  it('a name is accepted exactly when it matches the documented pattern, and never escapes inbox/', () => {
    const inbox = resolve('/mb/inbox');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 70 }),
          fc.string({ unit: 'binary', maxLength: 70 }),
          fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/),
        ),
        (name) => {
          const ok = agentNameProblem(name) === undefined;
          expect(ok).toBe(AGENT_NAME_PATTERN.test(name));
          if (ok) expect(resolve(inbox, `${name}.jsonl`).startsWith(`${inbox}/`)).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
