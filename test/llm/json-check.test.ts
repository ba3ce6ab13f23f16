import { describe, expect, it } from 'vitest';
import { toGrammarSchema } from '../../src/llm/embedded.js';
import { checkJson } from '../../src/llm/json-check.js';
import { loadPromptPack } from '../../src/sim/prompts/pack.js';
import { renderSchema } from '../../src/sim/prompts/render.js';
import { sampleViews } from '../../src/sim/prompts/sample.js';

const views = sampleViews('may_exist');
const pack = loadPromptPack();
const byzantineDecision = renderSchema(pack, 'decide', views.decide.byzantine);
const honestDecision = renderSchema(pack, 'decide', views.decide.honest);

describe('checking model answers against the pack schemas', () => {
  it('accepts a complete honest decision in range', () => {
    expect(checkJson({ internal_strategy: 'a', value: 50, public_reasoning: 'b' }, honestDecision)).toBeUndefined();
  });

  it('names the field of the first violation: out of range, missing, extra, wrong type', () => {
    expect(checkJson({ internal_strategy: 'a', value: 51, public_reasoning: 'b' }, honestDecision)).toBe(
      '$.value: must be ≤ 50',
    );
    expect(checkJson({ internal_strategy: 'a', value: 5 }, honestDecision)).toBe('$.public_reasoning: is required');
    expect(checkJson({ internal_strategy: 'a', value: 5, public_reasoning: 'b', confidence: 1 }, honestDecision)).toBe(
      '$.confidence: is not allowed',
    );
    expect(checkJson({ internal_strategy: 'a', value: 5.5, public_reasoning: 'b' }, honestDecision)).toBe(
      '$.value: must be integer',
    );
  });

  it('lets only Byzantine agents abstain', () => {
    expect(
      checkJson({ internal_strategy: 'a', value: 'abstain', public_reasoning: 'b' }, byzantineDecision),
    ).toBeUndefined();
    expect(checkJson({ internal_strategy: 'a', value: 'abstain', public_reasoning: 'b' }, honestDecision)).toBe(
      '$.value: must be integer',
    );
  });

  it('counts string length in code points, so an emoji is one character', () => {
    expect(checkJson('ab😀', { type: 'string', maxLength: 3 })).toBeUndefined();
    expect(checkJson('ab😀d', { type: 'string', maxLength: 3 })).toBe('$: must have at most 3 characters');
  });
});

describe('schemas for llama.cpp grammars', () => {
  it('turn a small integer range into an enum and anyOf into oneOf, keeping the rest', () => {
    const grammar = toGrammarSchema(byzantineDecision) as {
      properties: { value: { oneOf: unknown[] } };
      required: string[];
    };
    expect(grammar.properties.value.oneOf[0]).toEqual({ enum: Array.from({ length: 51 }, (_, i) => i) });
    expect(grammar.properties.value.oneOf[1]).toEqual({ type: 'string', enum: ['abstain'] });
    expect(grammar.required).toEqual(['internal_strategy', 'value']);
  });
});
