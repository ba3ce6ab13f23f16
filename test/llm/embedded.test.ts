import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';
import { checkJson } from '../../src/llm/json-check.js';
import type { RunRecord } from '../../src/sim/experiment/record.js';
import { DEFAULT_PACK_DIR } from '../../src/sim/prompts/pack.js';
import { writeTinyGguf } from './tiny-gguf.js';

let dir = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'witness-embedded-'));
  writeTinyGguf(join(dir, 'tiny.gguf'));
  // The default wording and schemas, with the free-text fields narrowed to a few phrases
  // long enough for the reference's checks (10+ characters of reasoning): a random-weight
  // model writes byte noise (often invalid UTF-8) into free strings. Byzantine reasoning is
  // required here too, as an answer without it would (rightly) be retried.
  cpSync(DEFAULT_PACK_DIR, join(dir, 'pack'), { recursive: true });
  for (const name of ['decide.honest.json', 'decide.byzantine.json']) {
    const path = join(dir, 'pack', 'schemas', name);
    const phrases = '{ "type": "string", "enum": ["I agree with this.", "Let us wait a round.", "I hold my value."] }';
    writeFileSync(
      path,
      readFileSync(path, 'utf8')
        .replaceAll('{ "type": "string" }', phrases)
        .replace('["internal_strategy", "value"]', '["internal_strategy", "value", "public_reasoning"]'),
    );
  }
});

describe('embedded llama.cpp backend', () => {
  it('plays a game on a tiny random-weight GGUF through the real llama.cpp engine, every answer schema-valid', {
    timeout: 240_000,
  }, async () => {
    const io = memoryIo(dir);
    // One thread: this test shares two cores with other suites, and llama.cpp's spinning threads slow down sharply under contention.
    const args = [
      'sim',
      '--quiet',
      '--agents',
      'embedded',
      '--model',
      'tiny.gguf',
      '--honest',
      '2',
      '--byzantine',
      '1',
      '--rounds',
      '2',
      '--runs',
      '1',
    ];
    const code = await runMain(
      [
        ...args,
        '--threads',
        '1',
        '--sequences',
        '3',
        '--context-size',
        '4096',
        '--prompts',
        'pack',
        '--decide-max-tokens',
        '160',
        '--vote-max-tokens',
        '48',
        '--out',
        'results.jsonl',
      ],
      io,
    );
    expect(io.err).not.toMatch(/Error/);
    expect(code).toBe(0);
    const record = JSON.parse(readFileSync(join(dir, 'results.jsonl'), 'utf8').trim()) as RunRecord;
    // The grammar allows a Byzantine abstain vote, which the reference retries in whole-round tries: the only invalid answers.
    const byzantine = record.agents.filter((_, i) => record.roles[i] === 'byzantine');
    expect(
      record.llm!.call_log.filter((c) => !c.valid).every((c) => c.kind === 'vote' && byzantine.includes(c.agent)),
    ).toBe(true);
    expect(record.llm!.calls).toBe(record.decisions);
    expect(
      record.llm!.call_log.every(
        (c) => c.endpoint === 'embedded:tiny.gguf' && c.completion_tokens > 0 && c.prompt_tokens > 0,
      ),
    ).toBe(true);
    for (const row of record.trajectory) {
      row.values.forEach((value, i) => {
        const schema =
          record.roles[i] === 'honest'
            ? { type: 'integer', minimum: 0, maximum: 50 }
            : { anyOf: [{ type: 'integer', minimum: 0, maximum: 50 }, { enum: ['abstain'] }] };
        expect(checkJson(value, schema)).toBeUndefined();
      });
      expect(
        row.votes.every(
          (v, i) => v === 'stop' || v === 'continue' || (v === 'abstain' && record.roles[i] === 'byzantine'),
        ),
      ).toBe(true);
    }
  });
});
