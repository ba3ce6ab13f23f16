import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type E12Results, type E12Trial, runE12 } from '../../src/a2a/e12.js';
import { verifyE12Results } from '../../src/a2a/e12-verify.js';
import { writeDirectoryFile } from '../../src/attest/key-directory.js';
import { newSigningKey } from '../../src/attest/keys.js';
import { memoryIo } from '../../src/cli/io.js';
import { sha256Hex } from '../../src/core/hash.js';
import { runMain } from '../../src/cli/main.js';
import { trust } from './helpers.js';

let dir: string;
let results: E12Results;
let file: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'witness-e12-test-'));
  // Real processes: the child agent and the MCP tool each run in a process of their own.
  results = await runE12({ trials: 2, warmup: 1 });
  file = join(dir, 'results.json');
  writeFileSync(file, JSON.stringify(results, null, 2));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...argv: string[]) {
  const io = memoryIo(dir);
  const code = await runMain(argv, io);
  return { code, out: io.out, err: io.err };
}

function tampered(change: (r: E12Results) => void): string {
  const copy = JSON.parse(JSON.stringify(results)) as E12Results;
  change(copy);
  const path = join(dir, `tampered-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(copy));
  return path;
}

describe('E12 over three loopback processes', () => {
  it('records every trial of every condition, each with a unique task id and a valid verdict', () => {
    expect(results.trials.map((t) => t.condition).sort()).toEqual([
      'chain',
      'chain',
      'dag',
      'dag',
      'dag+stream',
      'dag+stream',
      'none',
      'none',
    ]);
    expect(new Set(results.trials.map((t) => t.task_id)).size).toBe(8);
    expect(results.trials.every((t) => t.verdict.ok && t.output_len === Buffer.byteLength(t.output_text, 'utf8'))).toBe(
      true,
    );
  });

  it('splits each trial latency into discovery, A2A call, tool call, model, sign, co-sign and verify', () => {
    expect(Object.keys(results.trials[0]?.latency ?? {}).sort()).toEqual([
      'a2a_ms',
      'cosign_ms',
      'cpu_ms',
      'discovery_ms',
      'model_ms',
      'sign_ms',
      'tool_ms',
      'total_ms',
      'verify_ms',
    ]);
    const dag = results.trials.find((t) => t.condition === 'dag');
    expect(dag?.latency.cosign_ms).toBeGreaterThan(0);
  });

  it('accepts the child-key-only forgery under chain and rejects it under dag with COSIGNATURE_MISSING', () => {
    expect(results.forgery.map((f) => [f.construction, f.accepted, f.reasons])).toEqual([
      ['chain', true, []],
      ['dag', false, ['COSIGNATURE_MISSING']],
    ]);
  });

  it("records with each trial the A2A artifact its receipt covers, whose text is the trial's output", () => {
    for (const t of results.trials) {
      expect(t.artifact).toMatchObject({ task_id: expect.any(String), context_id: expect.any(String) });
      if (t.condition !== 'dag+stream') expect(t.artifact?.parts).toEqual([{ text: t.output_text }]);
      // Streamed: one part per chunk (a line of the answer each), which together are the output.
      else expect(t.artifact?.parts).toEqual(t.output_text.split(/(?<=\n)/).map((line) => ({ text: line })));
    }
  });

  it('passes its own re-verification', async () => {
    const check = await verifyE12Results(results);
    // Two dag edges, and two per dag+stream trial: the stream's final receipt and the artifact's.
    expect(check).toMatchObject({ ok: true, trials: 8, verified: 8, edges: 6, streams: 2, problems: [] });
  });
});

describe('witness verify on an E12 results file', () => {
  it('recomputes every hash and signature and exits 0', async () => {
    const { code, out } = await cli('verify', file);
    expect(code).toBe(0);
    expect(out).toMatch(/^valid: E12 results, 8\/8 trials verified/);
    expect(out).toMatch(/, 2 recorded streams re-checked chunk by chunk \(\d+ chunks\)\)/);
  });

  it('exits 1 naming the trial when an output text was changed', async () => {
    const { code, out } = await cli(
      'verify',
      tampered((r) => {
        (r.trials[1] as { output_text: string }).output_text += ' ';
      }),
    );
    expect(code).toBe(1);
    expect(out).toMatch(/\[trial 1\] .*SHA-256/);
  });

  it('exits 1 naming the trial when a part of its artifact was changed (the receipt covers the artifact)', async () => {
    const { code, out } = await cli(
      'verify',
      tampered((r) => {
        const parts = r.trials[2]?.artifact?.parts as Array<{ text: string }>;
        (parts[0] as { text: string }).text += ' ';
      }),
    );
    expect(code).toBe(1);
    expect(out).toMatch(/EVIDENCE_INVALID +\[trial 2\] .*OUTPUT_MISMATCH/);
  });

  it("exits 1 when the output text is not the artifact's text, even with its hash and length recomputed", async () => {
    const { code, out } = await cli(
      'verify',
      tampered((r) => {
        const t = r.trials[0] as E12Trial;
        t.output_text = t.output_text.toUpperCase();
        t.output_sha256 = sha256Hex(Buffer.from(t.output_text, 'utf8'));
      }),
    );
    expect(code).toBe(1);
    expect(out).toMatch(/OUTPUT_MISMATCH +\[trial 0\] .*not the text of the artifact's parts/);
  });

  it('exits 1 when a recorded byte length disagrees with the text', async () => {
    const { code, out } = await cli(
      'verify',
      tampered((r) => {
        (r.trials[0] as { output_len: number }).output_len += 1;
      }),
    );
    expect(code).toBe(1);
    expect(out).toMatch(/UTF-8 bytes, the record says/);
  });

  it('exits 1 when a parent co-signature was altered', async () => {
    const { code, out } = await cli(
      'verify',
      tampered((r) => {
        const leaf = r.trials.find((t) => t.condition === 'dag')?.evidence.path[1];
        const cosig = leaf?.signatures[1];
        if (cosig) cosig.sig = `${cosig.sig[0] === 'A' ? 'B' : 'A'}${cosig.sig.slice(1)}`;
      }),
    );
    expect(code).toBe(1);
    expect(out).toMatch(/COSIGNATURE_INVALID/);
  });

  it('exits 1 when a task id appears twice', async () => {
    const { code, out } = await cli(
      'verify',
      tampered((r) => {
        (r.trials[1] as { task_id: string }).task_id = r.trials[0]?.task_id ?? '';
      }),
    );
    expect(code).toBe(1);
    expect(out).toMatch(/task id used twice/);
  });

  it("exits 1 naming the trial when a chunk of a dag+stream trial's recorded stream was changed (CHUNK_MISMATCH)", async () => {
    let at = -1;
    const { code, out } = await cli(
      'verify',
      tampered((r) => {
        at = r.trials.findIndex((t) => t.condition === 'dag+stream');
        const line = r.trials[at]?.stream?.find((l) => l.type === 'chunk') as { bytes: string };
        line.bytes = Buffer.from('[{"text":"edited"}]\n').toString('base64');
      }),
    );
    expect(code).toBe(1);
    expect(out).toMatch(
      new RegExp(
        `EVIDENCE_INVALID +\\[trial ${at}\\] dag\\+stream trial, .*CHUNK_MISMATCH \\[stream of artifact \\S+, chunk 0\\]`,
      ),
    );
  });

  it('exits 1 when a dag+stream trial lost its recorded stream, or a chunk of it (CHUNK_MISSING)', async () => {
    const lost = await cli(
      'verify',
      tampered((r) => {
        delete r.trials.find((t) => t.condition === 'dag+stream')?.stream;
      }),
    );
    expect([lost.code, lost.out]).toEqual([
      1,
      expect.stringMatching(/MALFORMED \[stream\] A dag\+stream trial records the stream/),
    ]);
    const dropped = await cli(
      'verify',
      tampered((r) => {
        const stream = r.trials.find((t) => t.condition === 'dag+stream')?.stream as Array<{ type: string }>;
        stream.splice(
          stream.findIndex((l) => l.type === 'chunk'),
          1,
        );
      }),
    );
    expect([dropped.code, dropped.out]).toEqual([
      1,
      expect.stringMatching(/CHUNK_MISSING \[stream of artifact \S+, chunk 0\]/),
    ]);
  });

  it('exits 1 when a recorded forgery verdict was flipped', async () => {
    const { code, out } = await cli(
      'verify',
      tampered((r) => {
        (r.forgery[1] as { accepted: boolean }).accepted = true;
      }),
    );
    expect(code).toBe(1);
    expect(out).toMatch(/forgery under dag/);
  });

  it('exits 1 with UNKNOWN_KEY against a directory of yours that does not trust the run keys', async () => {
    const keys = join(dir, 'mine.json');
    writeDirectoryFile(keys, trust([newSigningKey('someone')]).file);
    const { code, out } = await cli('verify', file, '--keys', keys);
    expect(code).toBe(1);
    // One line for the directory, not a failed signature per trial.
    const lines = out.trim().split('\n');
    expect(lines).toEqual([
      'invalid: E12 results, 8 trials, none checked: your key directory holds none of the keys that signed them.',
      expect.stringMatching(
        /^ {2}UNKNOWN_KEY +your key directory holds none of the keys that signed this run \(ed25519:[0-9a-f]{16}, ed25519:[0-9a-f]{16}\)/,
      ),
    ]);
  });

  it('still needs --output and --keys for a plain receipt', async () => {
    const receipt = join(dir, 'receipt.json');
    writeFileSync(receipt, JSON.stringify(results.trials[0]?.evidence.path[0]));
    const { code, err } = await cli('verify', receipt);
    expect(code).toBe(2);
    expect(err).toMatch(/needs --output <file> and --keys <file>/);
  });

  it('prints the re-verification as JSON with --json', async () => {
    const { code, out } = await cli('verify', file, '--json');
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({
      ok: true,
      type: 'witness/e12-results',
      legacy: false,
      problems: [],
      details: { trials: 8, trustedKeys: 'file' },
    });
  });
});
