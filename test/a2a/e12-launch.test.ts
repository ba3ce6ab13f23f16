/**
 * E12's tool and child processes as the bench starts them (e12-launch.ts): real Node
 * processes running the library's entry script, each saying it is ready with its URL,
 * stopped by SIGTERM or by the end of its stdin, and a start that fails named with what
 * the process said.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startE12Process, stopE12Process } from '../../src/a2a/e12-launch.js';
import { connectEvidenceTool } from '../../src/a2a/tool-server.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-e12-launch-'));
let processes: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(processes.map(stopE12Process));
  processes = [];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function exited(proc: ChildProcess): Promise<[number | null, NodeJS.Signals | null]> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve([proc.exitCode, proc.signalCode]);
  return new Promise((resolve) => proc.once('exit', (code, signal) => resolve([code, signal])));
}

describe("E12's processes", () => {
  it('serves the MCP tool at the URL it prints, and exits 0 on SIGTERM', { timeout: 30_000 }, async () => {
    const url = await startE12Process({ role: 'tool' }, processes);
    const tool = await connectEvidenceTool(url);
    expect((await tool.getEvidence('inspect lot 7')).items.length).toBeGreaterThan(0);
    await tool.close();
    const proc = processes[0]!;
    const exit = exited(proc);
    await stopE12Process(proc);
    expect(await exit).toEqual([0, null]);
  });

  it('stops when its stdin ends, as it does when the bench that started it is gone', { timeout: 30_000 }, async () => {
    await startE12Process({ role: 'tool' }, processes);
    const proc = processes[0]!;
    const exit = exited(proc);
    proc.stdin?.end();
    expect(await exit).toEqual([0, null]);
  });

  it('names the process and shows what it said when it exits before it is ready', { timeout: 30_000 }, async () => {
    const key = join(dir, 'missing.key.json');
    const start = startE12Process(
      {
        role: 'child',
        key,
        taskStore: ':memory:',
        toolUrl: 'http://127.0.0.1:9/mcp',
        cosigners: {},
        agent: 'policy',
      },
      processes,
    );
    await expect(start).rejects.toThrow(
      new RegExp(
        `^E12's child agent exited \\(1\\) before it was ready:\\n.*${key.replaceAll('.', '\\.')} does not exist`,
      ),
    );
  });
});
