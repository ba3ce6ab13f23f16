/**
 * The parent's delegation (`sendTask`, src/a2a/send.ts) and its record: against the
 * real child agent, and against scripted children on the real SDK server that answer
 * with Tasks (blocking, unfinished, streamed), fail, or forge with their own key only.
 * Real keys, the real co-signer over HTTP, the real release signer.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpGrant } from '../../src/a2a/cosign-client.js';
import { type DelegationRecord, verifyDelegationRecord } from '../../src/a2a/delegation-record.js';
import { CONDITIONS, type Condition, ERROR_KEY, EVIDENCE_KEY } from '../../src/a2a/metadata.js';
import { delegate } from '../../src/a2a/parent.js';
import { type SendTaskOptions, sendTask } from '../../src/a2a/send.js';
import { newSigningKey, type SigningKey } from '../../src/attest/keys.js';
import { SqliteNonceStore } from '../../src/attest/nonce-store.js';
import { createReleaseSigner } from '../../src/attest/signer.js';
import { forge } from '../../src/attest/testing/world.js';
import { startWorld, trust, type World } from './helpers.js';
import {
  AgentEvent,
  releaseArtifact,
  type ScriptedAgent,
  serveScriptedAgent,
  streamingScript,
  TaskState,
  taskOf,
  textArtifact,
  type Turn,
} from './scripted-agent.js';

const validateRecord = new Ajv2020({ allErrors: true, strict: false, validateFormats: false }).compile(
  JSON.parse(
    readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'schemas', 'a2a-delegation.schema.json'), 'utf8'),
  ) as object,
);

let world: World;
const agents: ScriptedAgent[] = [];
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await world.close();
});

/** The options of a parent in `world` under `construction`, its grants recorded over HTTP. */
function parent(construction: Condition, extra: Partial<SendTaskOptions> = {}): SendTaskOptions {
  return {
    directory: world.directory,
    construction,
    ...(construction === 'none' ? {} : { key: world.parent }),
    ...(construction === 'dag'
      ? { grant: (g) => httpGrant(world.cosigner.url, g, { adminToken: world.cosigner.adminToken }) }
      : {}),
    ...extra,
  };
}

async function scripted(script: (turn: Turn) => Promise<void>, options = {}): Promise<string> {
  const agent = await serveScriptedAgent(world.child, script, options);
  agents.push(agent);
  return agent.url;
}

/** The record re-verified as `witness verify` does, with the parent's directory. */
const recheck = (record: unknown) => verifyDelegationRecord(record, { directory: world.directory });
const copy = (record: DelegationRecord) => JSON.parse(JSON.stringify(record)) as DelegationRecord;

describe('a delegation to the child agent (witness a2a serve, a Task answer)', () => {
  it.each(CONDITIONS)('under %s verifies, and its record re-verifies and matches the documented schema', async (c) => {
    const result = await sendTask(world.agent.url, `Inspect lot ${c}.`, parent(c));
    expect(result.check.problems).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.check.paths[0]).toHaveLength(c === 'none' ? 1 : 2);
    expect(result.check.output).toMatch(/findings within tolerance/);
    expect(validateRecord(result.record) ? [] : validateRecord.errors).toEqual([]);
    expect(await recheck(copy(result.record))).toMatchObject({ ok: true, problems: [] });
  });

  it('refuses a Message answer replayed to a parent sharing the nonce store (REPLAY), and its record keeps the replay', async () => {
    const text = 'Lot 70: within tolerance.';
    let evidence: unknown;
    const url = await scripted(async (turn) => {
      evidence ??= {
        path: [await createReleaseSigner({ key: world.child, instance: 'replayer' }).releaseOutput(Buffer.from(text))],
      };
      turn.bus.publish(AgentEvent.message(_message(turn, text, evidence)));
    });
    const nonceStore = new SqliteNonceStore(':memory:');
    try {
      expect((await sendTask(url, 'Inspect lot 70.', parent('none', { nonceStore }))).ok).toBe(true);
      const again = await sendTask(url, 'Inspect lot 70.', parent('none', { nonceStore }));
      expect(again.check.problems.map((p) => p.code)).toEqual(['REPLAY']);
      expect(await recheck(copy(again.record))).toMatchObject({ ok: false, problems: [{ code: 'REPLAY' }] });
    } finally {
      nonceStore.close();
    }
  });
});

describe('a delegation answered with a Task', () => {
  /** A child that completes the task with `texts` as one artifact per entry, each released over its bytes. */
  const completing = (artifacts: string[][]) =>
    scripted(async (turn) => {
      const released = [];
      for (const [i, texts] of artifacts.entries())
        released.push(await releaseArtifact(world.child, turn, textArtifact(`a${i}`, texts), world.cosigner.url));
      turn.bus.publish(AgentEvent.task(taskOf(turn, TaskState.TASK_STATE_COMPLETED, released)));
    });

  it('verifies when every artifact covers its bytes; the output is the text parts in order', async () => {
    const url = await completing([['Lot 7: ', 'within tolerance.'], [' Lot 8: outside.']]);
    const result = await sendTask(url, 'Inspect lots 7 and 8.', parent('chain'));
    expect(result.check.problems).toEqual([]);
    expect(result.check.output).toBe('Lot 7: within tolerance. Lot 8: outside.');
    expect(result.check.paths).toHaveLength(2);
    expect(result.check.task?.state).toBe('TASK_STATE_COMPLETED');
    expect(validateRecord(result.record) ? [] : validateRecord.errors).toEqual([]);
    expect((await recheck(copy(result.record))).ok).toBe(true);
  });

  it('verifies under dag, the artifact co-signed by the parent through the grant', async () => {
    const url = await completing([['Lot 9: within tolerance.']]);
    const result = await sendTask(url, 'Inspect lot 9.', parent('dag'));
    expect(result.check.problems).toEqual([]);
    expect(result.check.paths[0]?.at(-1)?.type).toBe('edge');
  });

  it('does not re-verify a record whose artifact, task or context was changed after the answer', async () => {
    const url = await completing([['Lot 10: ', 'within tolerance.']]);
    const result = await sendTask(url, 'Inspect lot 10.', parent('chain'));
    expect(result.ok).toBe(true);
    const edits: Record<string, (task: Record<string, unknown>, value: string) => void> = {
      'task id': (t, v) => {
        t.id = v;
      },
      'context id': (t, v) => {
        t.contextId = v;
      },
      'artifact id': (t, v) => {
        (t.artifacts as Array<Record<string, unknown>>)[0]!.artifactId = v;
      },
      'a part': (t, v) => {
        ((t.artifacts as Array<{ parts: Array<Record<string, unknown>> }>)[0]!.parts[1] as { text: string }).text = v;
      },
      "a part's metadata": (t, v) => {
        (t.artifacts as Array<{ parts: Array<Record<string, unknown>> }>)[0]!.parts[0]!.metadata = { note: v };
      },
    };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(edits)), fc.string({ minLength: 1 }), async (what, value) => {
        const record = copy(result.record);
        const task = (record.answer as { task: Record<string, unknown> }).task;
        const before = JSON.stringify(task);
        edits[what]!(task, value);
        fc.pre(JSON.stringify(task) !== before);
        const again = await recheck(record);
        expect(again.ok, what).toBe(false);
        expect(again.problems.map((p) => p.code)).toEqual(
          expect.arrayContaining(['OUTPUT_MISMATCH', 'VERDICT_NOT_REPRODUCED']),
        );
      }),
      { numRuns: 40 },
    );
  });

  it("leaves the artifact's own metadata, where the evidence travels, outside what the receipt covers", async () => {
    const url = await completing([['Lot 11: within tolerance.']]);
    const result = await sendTask(url, 'Inspect lot 11.', parent('chain'));
    const record = copy(result.record);
    const artifact = (record.answer as { task: { artifacts: Array<{ metadata: Record<string, unknown> }> } }).task
      .artifacts[0]!;
    artifact.metadata = { ...artifact.metadata, note: 'added later' };
    expect((await recheck(record)).ok).toBe(true);
  });

  it("is TASK_FAILED with the child's reason when the task failed", async () => {
    const url = await scripted(async (turn) => {
      const error = { code: 'REFUSED', message: 'the co-signer refused to co-sign (HTTP 403): no grant' };
      turn.bus.publish(AgentEvent.task(taskOf(turn, TaskState.TASK_STATE_FAILED, [], { [ERROR_KEY]: error })));
    });
    const result = await sendTask(url, 'Inspect lot 12.', parent('chain'));
    expect(result.ok).toBe(false);
    expect(result.check.problems).toEqual([
      {
        code: 'TASK_FAILED',
        message: expect.stringMatching(/ended TASK_STATE_FAILED without a result: REFUSED: the co-signer refused/),
        at: 'task',
      },
    ]);
    expect(await recheck(copy(result.record))).toMatchObject({ ok: false, problems: [{ code: 'TASK_FAILED' }] });
  });

  it('is EVIDENCE_MISSING when an artifact of a completed task carries no evidence', async () => {
    const url = await scripted(async (turn) => {
      const task = taskOf(turn, TaskState.TASK_STATE_COMPLETED, [textArtifact('bare', ['unattested'])]);
      turn.bus.publish(AgentEvent.task(task));
    });
    const result = await sendTask(url, 'Inspect lot 13.', parent('none'));
    expect(result.check.problems.map((p) => [p.code, p.at])).toEqual([['EVIDENCE_MISSING', 'artifact 0 (bare)']]);
  });

  it('follows a task answered before it finished with GetTask until it completes', async () => {
    let finish: (() => Promise<void>) | undefined;
    const url = await scripted(
      async (turn) => {
        turn.bus.publish(AgentEvent.task(taskOf(turn, TaskState.TASK_STATE_WORKING)));
        const artifact = await releaseArtifact(world.child, turn, textArtifact('late', ['Lot 14: done.']));
        finish = () => turn.store.save(taskOf(turn, TaskState.TASK_STATE_COMPLETED, [artifact]), turn.ctx.context);
      },
      // The task completes when the parent first asks for it: no timing involved.
      { beforeRequest: async (method: string) => void (method === 'GetTask' && (await finish?.())) },
    );
    const result = await sendTask(url, 'Inspect lot 14.', parent('chain'));
    expect(result.check.problems).toEqual([]);
    expect(result.check.output).toBe('Lot 14: done.');
  });

  it('streams each text part as it arrives and verifies both the recorded stream and the artifact the chunks build', async () => {
    const url = await scripted(streamingScript(world.child, 'Lot 15: within tolerance.'), { streaming: true });
    const chunks: string[] = [];
    const result = await sendTask(
      url,
      'Inspect lot 15.',
      parent('chain', { stream: true, onText: (t) => chunks.push(t) }),
    );
    expect(chunks).toEqual(['Lot ', '15: ', 'within ', 'tolerance.']);
    expect(result.check.problems).toEqual([]);
    expect(result.check.output).toBe('Lot 15: within tolerance.');
    expect(result.streams.map((s) => [s.verdict, s.received, s.checkpoints])).toEqual([['valid', 4, 2]]);
    expect(result.record.streams).toHaveLength(1);
    expect(await verifyDelegationRecord(result.record, { directory: world.directory })).toMatchObject({
      ok: true,
      problems: [],
    });
  });
});

describe('a delegation that gets no answer', () => {
  it('is TIMEOUT after --timeout, and nothing is verified', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const url = await scripted(async (turn) => {
      await held;
      turn.bus.publish(AgentEvent.task(taskOf(turn, TaskState.TASK_STATE_CANCELED)));
    });
    await expect(sendTask(url, 'Inspect lot 30.', parent('chain', { timeoutMs: 300 }))).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: expect.stringMatching(/gave no final answer within 300 ms/),
    });
    release();
  });

  it('is CANCELLED when the caller aborts, before anything is signed or sent', async () => {
    const controller = new AbortController();
    controller.abort();
    let called = false;
    const url = await scripted(async () => {
      called = true;
    });
    await expect(sendTask(url, 'Inspect lot 31.', parent('dag', { signal: controller.signal }))).rejects.toMatchObject({
      code: 'CANCELLED',
    });
    expect(called).toBe(false);
  });
});

describe('a child that holds only its own key', () => {
  /** Answers with a message whose evidence claims the parent's task: a chain link, or a dag edge it signs alone. */
  const forger = (as: 'chain' | 'dag') =>
    scripted(async (turn) => {
      const text = 'Forged: every lot is within tolerance.';
      const link = await createReleaseSigner({ key: world.child, instance: 'forger' }).releaseOutput(
        Buffer.from(text, 'utf8'),
        { ancestors: turn.ancestors, construction: 'chain' },
      );
      const { signatures: _own, ...unsigned } = link;
      const leaf =
        as === 'chain'
          ? link
          : forge({ ...unsigned, type: 'edge', construction: 'dag', cosigners: [world.parent.deployer] }, [
              world.child,
            ]);
      turn.bus.publish(AgentEvent.message(_message(turn, text, { path: [...turn.ancestors, leaf] })));
    });

  it('is accepted under chain (hash continuity is not consent: the documented limit)', async () => {
    const result = await sendTask(await forger('chain'), 'Inspect lot 20.', parent('chain'));
    expect(result.check.problems).toEqual([]);
  });

  it('is refused under dag with COSIGNATURE_MISSING, and so is its record', async () => {
    const result = await sendTask(await forger('dag'), 'Inspect lot 21.', parent('dag'));
    expect(result.ok).toBe(false);
    expect(result.check.problems.map((p) => p.code)).toEqual(['COSIGNATURE_MISSING']);
    expect(await recheck(copy(result.record))).toMatchObject({
      ok: false,
      problems: [{ code: 'COSIGNATURE_MISSING' }],
    });
  });

  /** Answers every task with the evidence of the first one: a genuine path, rooted at another task receipt. */
  const replaying = () => {
    const text = 'Lot 22: within tolerance.';
    let first: unknown;
    return scripted(async (turn) => {
      first ??= {
        path: [
          ...turn.ancestors,
          await createReleaseSigner({ key: world.child, instance: 'replayer' }).releaseOutput(Buffer.from(text), {
            ancestors: turn.ancestors,
            construction: 'chain',
          }),
        ],
      };
      turn.bus.publish(AgentEvent.message(_message(turn, text, first)));
    });
  };
  /** Answers with a release by `other`'s runtime under the parent's task receipt. */
  const relaying = (other: SigningKey) =>
    scripted(async (turn) => {
      const text = 'Relayed from another organisation.';
      const leaf = await createReleaseSigner({ key: other, instance: 'relay' }).releaseOutput(
        Buffer.from(text, 'utf8'),
        { ancestors: turn.ancestors, construction: 'chain' },
      );
      turn.bus.publish(AgentEvent.message(_message(turn, text, { path: [...turn.ancestors, leaf] })));
    });

  it("is ROOT_MISMATCH when it answers with a genuine path of another of the parent's tasks", async () => {
    const url = await replaying();
    expect((await sendTask(url, 'Inspect lot 22.', parent('chain'))).ok).toBe(true);
    const result = await sendTask(url, 'Inspect lot 23.', parent('chain'));
    expect(result.check.problems.map((p) => [p.code, p.at])).toEqual([['ROOT_MISMATCH', 'message, receipt 0']]);
  });

  it('is CHILD_MISMATCH when the result was released by another deployer than the card names', async () => {
    const other = newSigningKey('org-other');
    const directory = trust([world.parent, world.child, other]).directory;
    const result = await sendTask(await relaying(other), 'Inspect lot 24.', { ...parent('chain'), directory });
    expect(result.check.problems.map((p) => p.code)).toEqual(['CHILD_MISMATCH']);
  });

  it("is ROOT_MISMATCH for delegate() too, the parent E12 runs, when it answers another of the parent's tasks", async () => {
    const url = await replaying();
    const options = { key: world.parent, directory: world.directory };
    expect((await delegate(url, 'Inspect lot 25.', 'chain', options)).verdict.ok).toBe(true);
    const result = await delegate(url, 'Inspect lot 26.', 'chain', options);
    expect(result.verdict.reasons.map((p) => [p.code, p.at])).toEqual([['ROOT_MISMATCH', 'message, receipt 0']]);
  });

  it('is CHILD_MISMATCH for delegate() too when another deployer released the result', async () => {
    const other = newSigningKey('org-other');
    const directory = trust([world.parent, world.child, other]).directory;
    const result = await delegate(await relaying(other), 'Inspect lot 27.', 'chain', { key: world.parent, directory });
    expect(result.verdict.reasons.map((p) => p.code)).toEqual(['CHILD_MISMATCH']);
  });
});

function _message(turn: Turn, text: string, evidence: unknown) {
  const status = taskOf(turn, TaskState.TASK_STATE_COMPLETED, [], { [EVIDENCE_KEY]: evidence }).status!.message!;
  return {
    ...status,
    taskId: '',
    parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: '' }],
  };
}
