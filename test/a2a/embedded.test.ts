import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { embeddedBackend } from '../../src/a2a/llm-backend.js';
import { writeTinyGguf } from '../llm/tiny-gguf.js';

describe('embedded A2A child', () => {
  it('answers a task through the real llama.cpp engine on a tiny GGUF, or fails it with the model as the reason', {
    timeout: 240_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'witness-a2a-gguf-'));
    writeTinyGguf(join(dir, 'tiny.gguf'));
    // One thread: llama.cpp's spinning worker threads crawl on a busy 2-core machine.
    const backend = embeddedBackend({ modelPath: join(dir, 'tiny.gguf'), contextSize: 512, threads: 1 });
    try {
      const evidence = { task_sha256: 'ab'.repeat(32), items: ['diameter 10.01 mm, within tolerance'] } as never;
      // A random-weight model writes schema-shaped JSON (the grammar forces it) whose text may
      // still be garbage: either it is released as a verdict, or the task fails with the reason.
      const answer = await Promise.resolve(backend.answer('Inspect lot 7', evidence)).then(
        (text: string) => ({ text }),
        (error: Error) => ({ error: error.message }),
      );
      if ('text' in answer) expect(answer.text).toMatch(/^Task abababababababab: verdict (ACCEPT|REJECT)\. /);
      else expect(answer.error).toMatch(/model's answer/);
    } finally {
      await backend.close();
    }
  });
  it('reports a missing model file when the first task arrives', async () => {
    const backend = embeddedBackend({ modelPath: join(tmpdir(), 'witness-no-such-model.gguf') });
    await expect(backend.answer('t', { task_sha256: '00', items: [] } as never)).rejects.toThrow();
    await backend.close();
  });
});
