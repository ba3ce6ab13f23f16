// 1,000 connections of the official MCP SDK client to `witness a2a tool`, each doing
// what the child agent does (connect — initialize, then the GET for a server stream —,
// one get_evidence, close), leave the heap where it was: a GET that was held open
// leaked ~52 KB per connection before, without bound. Heap measured after forced
// garbage collections, before and after; the figure is printed.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectEvidenceTool, serveEvidenceTool, type ToolServer } from '../../src/a2a/tool-server.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let tool: ToolServer;
beforeAll(async () => {
  tool = await serveEvidenceTool();
});
afterAll(() => tool?.close());

async function connections(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const client = await connectEvidenceTool(tool.url);
    await client.getEvidence(`task ${i}`);
    await client.close();
  }
}

/** Heap in use after collections, once nothing is pending (a few rounds: finalizers free more). */
async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  return process.memoryUsage().heapUsed;
}

it('keeps heap growth under 5 MB over 1,000 SDK client connections', async () => {
  await connections(200); // warm up: module caches, JIT, the HTTP agent's pool
  const before = await settledHeap();
  await connections(1000);
  const after = await settledHeap();
  const growthMb = (after - before) / 1024 / 1024;
  console.log(
    `a2a tool: heap ${(before / 1024 / 1024).toFixed(1)} MB -> ${(after / 1024 / 1024).toFixed(1)} MB after 1,000 SDK client connections (growth ${growthMb.toFixed(2)} MB, limit 5 MB)`,
  );
  expect(growthMb).toBeLessThan(5);
}, 300_000);
