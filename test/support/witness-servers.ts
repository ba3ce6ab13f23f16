/**
 * `witness` server commands as real processes for CLI tests (`witness a2a serve|tool|
 * cosigner …`), each started from the bundled CLI with `--port 0 --json` in a test's
 * folder; `start` resolves with the URL of its first line, `{"url": …}`, and `stopAll`
 * ends every one it started with SIGTERM, waiting for each to exit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { witnessBundle } from './witness-bundle.js';

export interface WitnessServers {
  /** Starts `witness ARGS --port 0 --json` and resolves with its URL. */
  start(args: string[]): Promise<string>;
  stopAll(): Promise<void>;
}

export function witnessServers(cwd: string): WitnessServers {
  const processes: ChildProcess[] = [];
  return {
    async start(args) {
      const [node, bundle] = await witnessBundle();
      const proc = spawn(node!, [bundle!, ...args, '--port', '0', '--json'], {
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      processes.push(proc);
      let err = '';
      proc.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
      });
      return new Promise((resolve, reject) => {
        proc.once('exit', (code) => reject(new Error(`witness ${args.join(' ')} exited ${code}: ${err}`)));
        createInterface({ input: proc.stdout! }).once('line', (line) =>
          resolve((JSON.parse(line) as { url: string }).url),
        );
      });
    },
    async stopAll() {
      await Promise.all(
        processes.map(async (proc) => {
          if (proc.exitCode !== null || proc.signalCode !== null) return;
          const exited = new Promise((r) => proc.once('exit', r));
          proc.kill('SIGTERM');
          await exited;
        }),
      );
    },
  };
}
