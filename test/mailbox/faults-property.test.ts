/**
 * The issue-13 property, checked with fast-check (seed printed; replay with
 * FC_SEED=…): random interleavings of sends (several in flight), reads, waits,
 * SIGKILLs of the real HTTP server process in the middle of a burst of sends, and a
 * full disk (a tmpfs filled by another file, then freed), on the JSONL and SQLite stores. Every run
 * meets the full disk at least once, not only by chance: each sequence holds one
 * `flood` (fill the disk, then send until a send is refused for it), and the run
 * asserts that a send was refused for a full disk. After recovery, every
 * acknowledged send is stored, no acknowledged read delivered a message twice or
 * one that is not stored, and `verify` is clean.
 */
import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { fillDisk, makeMailboxOn, mountTmpfs, storedIds, type Tmpfs, TMPFS_UNAVAILABLE } from './faults.js';
import { cli, type Connected, type HttpServerProcess, httpClient, startHttp, type TestMailbox } from './helpers.js';

type Agent = 'a' | 'b';
type Op =
  | { kind: 'send'; from: Agent; to: Agent; count: number }
  | { kind: 'read'; who: Agent; limit: number; peek: boolean }
  | { kind: 'wait'; who: Agent; timeoutMs: number }
  | { kind: 'kill'; count: number; after: number }
  | { kind: 'full'; leave: number }
  | { kind: 'flood'; leave: number; inFlight: number }
  | { kind: 'free' };

/** Sends of one flood at most: far more than a few KiB of free space holds. */
const FLOOD_MAX = 400;
/** What the server answers a send that did not fit (store/files.ts writeFailure). */
const DISK_FULL = /disk .*is full/i;

/** A call the server does not answer in this time counts as not acknowledged (a stuck lock, say). */
const CALL = { timeout: 20_000 };

const agent = fc.constantFrom<Agent>('a', 'b');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('send' as const),
      from: agent,
      to: agent,
      count: fc.integer({ min: 1, max: 6 }),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      who: agent,
      limit: fc.integer({ min: 1, max: 5 }),
      peek: fc.boolean(),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('wait' as const),
      who: agent,
      timeoutMs: fc.integer({ min: 10, max: 120 }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('kill' as const),
      count: fc.integer({ min: 1, max: 8 }),
      after: fc.integer({ min: 0, max: 7 }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('full' as const), leave: fc.integer({ min: 0, max: 12_000 }) }),
    weight: 1,
  },
  { arbitrary: fc.constant({ kind: 'free' as const }), weight: 1 },
);
const floodArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constant('flood' as const),
  leave: fc.integer({ min: 0, max: 8_000 }),
  inFlight: fc.constantFrom(1, 8),
});
/** A random sequence with one flood at a random place: every run meets a full disk. */
const opsArb: fc.Arbitrary<Op[]> = fc
  .tuple(fc.array(opArb, { minLength: 3, maxLength: 13 }), floodArb, fc.nat())
  .map(([ops, flood, at]) => {
    const copy = [...ops];
    copy.splice(at % (ops.length + 1), 0, flood);
    return copy;
  });

/** One run's mailbox, its server process and what the clients were told. */
class World {
  server: HttpServerProcess | undefined;
  clients: Partial<Record<Agent, Connected>> = {};
  filler: string | undefined;
  readonly acked = new Set<string>();
  readonly delivered: string[] = [];
  /** Sends refused because the disk was full. */
  diskFull = 0;

  constructor(readonly mb: TestMailbox) {}

  async start(): Promise<void> {
    this.free(); // a server cannot open a SQLite database on a full disk; an operator frees space first
    this.server = await startHttp(this.mb.dir);
    for (const who of ['a', 'b'] as const) this.clients[who] = await httpClient(this.server.url, this.mb.tokens[who]!);
  }

  kill(): void {
    this.server?.proc.kill('SIGKILL');
  }

  async restart(): Promise<void> {
    const proc = this.server?.proc;
    if (proc && proc.exitCode === null && proc.signalCode === null) await new Promise((r) => proc.once('exit', r));
    await Promise.all(Object.values(this.clients).map((c) => c.close().catch(() => undefined)));
    await this.start();
  }

  /** One send; its id when acknowledged, undefined when refused or cut off. */
  async send(from: Agent, to: Agent, body: string): Promise<string | undefined> {
    try {
      const r = await this.clients[from]!.client.callTool(
        { name: 'send_message', arguments: { to, body } },
        undefined,
        CALL,
      );
      if (r.isError) {
        if ((r.content as Array<{ text?: string }>).some((c) => DISK_FULL.test(c.text ?? ''))) this.diskFull++;
        return undefined;
      }
      const id = (r.structuredContent as { id: string }).id;
      this.acked.add(id);
      return id;
    } catch {
      return undefined;
    }
  }

  async read(
    who: Agent,
    tool: 'check_inbox' | 'wait_for_message',
    args: Record<string, unknown>,
    peek = false,
  ): Promise<void> {
    const r = await this.clients[who]!.client.callTool({ name: tool, arguments: args }, undefined, CALL).catch(
      () => undefined,
    );
    if (!r || r.isError || peek) return;
    this.delivered.push(...(r.structuredContent as { messages: Array<{ id: string }> }).messages.map((m) => m.id));
  }

  fill(leave: number): void {
    this.free();
    this.filler = fillDisk(this.mb.dir, leave);
  }

  free(): void {
    if (this.filler) rmSync(this.filler, { force: true });
    this.filler = undefined;
  }
}

async function run(w: World, op: Op, step: number): Promise<void> {
  switch (op.kind) {
    case 'send':
      await Promise.all(Array.from({ length: op.count }, (_, i) => w.send(op.from, op.to, `s${step}.${i}`)));
      return;
    case 'read':
      return w.read(op.who, 'check_inbox', { limit: op.limit, peek: op.peek }, op.peek);
    case 'wait':
      return w.read(op.who, 'wait_for_message', { timeout_ms: op.timeoutMs });
    case 'kill': {
      let acks = 0;
      if (op.after === 0) setImmediate(() => w.kill());
      await Promise.all(
        Array.from({ length: op.count }, async (_, i) => {
          if ((await w.send('a', 'b', `k${step}.${i}`)) && ++acks === op.after) w.kill();
        }),
      );
      w.kill();
      return w.restart();
    }
    case 'full':
      return w.fill(op.leave);
    case 'flood': {
      w.fill(op.leave);
      const before = w.diskFull;
      for (let sent = 0; w.diskFull === before && sent < FLOOD_MAX; sent += op.inFlight) {
        await Promise.all(
          Array.from({ length: op.inFlight }, (_, i) => w.send('a', 'b', `f${step}.${sent + i} ${'x'.repeat(200)}`)),
        );
      }
      return;
    }
    case 'free':
      return w.free();
  }
}

describe.skipIf(TMPFS_UNAVAILABLE !== undefined)('faults property', () => {
  let fs: Tmpfs;
  beforeAll(() => {
    fs = mountTmpfs(4 * 1024 * 1024);
  });
  afterAll(() => fs?.unmount());

  it('after kills and a full disk, acknowledged ⊆ stored, no read delivered twice, and verify is clean', async () => {
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
    console.log(`faults property: seed ${seed} (replay with FC_SEED=${seed})`);
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('jsonl' as const, 'sqlite' as const), opsArb, async (store, ops) => {
        const mb = await makeMailboxOn(fs, ['a', 'b'], store, `mb${n++}`);
        const w = new World(mb);
        try {
          await w.start();
          for (const [step, op] of ops.entries()) await run(w, op, step);
          w.free();
          await w.server?.stop();
        } finally {
          w.kill();
          w.free();
        }
        console.log(
          `faults property: ${store}, ${ops.length} steps: ${w.acked.size} sends acknowledged, ${w.diskFull} refused for a full disk`,
        );
        expect(w.diskFull, 'sends refused for a full disk in this run').toBeGreaterThan(0);
        await cli(['mailbox', 'recover', mb.dir]);
        const stored = await storedIds(mb.dir);
        expect([...w.acked].filter((id) => !stored.has(id))).toEqual([]);
        expect(w.delivered.filter((id) => !stored.has(id))).toEqual([]);
        expect(new Set(w.delivered).size).toBe(w.delivered.length);
        expect((await verifyMailbox(mb.dir, { keyPath: mb.keyPath })).problems).toEqual([]);
        rmSync(mb.dir, { recursive: true, force: true });
      }),
      { seed, numRuns: 6, endOnFailure: true },
    );
  }, 240_000);
});
