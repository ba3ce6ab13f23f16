// A copy of the built-in pack is recorded under its own name once edited.
import { appendFileSync, cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PACK_DIR, loadPromptPack } from '../../src/sim/prompts/pack.js';

describe('a copied prompt pack', () => {
  it('is "default" while it is the default word for word, and takes its folder name once edited', () => {
    const copy = join(mkdtempSync(join(tmpdir(), 'witness-pack-')), 'my-pack');
    cpSync(DEFAULT_PACK_DIR, copy, { recursive: true });
    expect(loadPromptPack(copy).manifest.name).toBe('default');
    appendFileSync(join(copy, 'vote.honest.txt'), '\nThink twice.');
    const edited = loadPromptPack(copy);
    expect([edited.manifest.name, edited.hash === loadPromptPack().hash]).toEqual(['my-pack', false]);
  });
});
