// The official MCP conformance suite against `witness a2a tool` (a real process). The
// scenarios that apply pass; the others are listed with why they do not apply
// (test/support/mcp-conformance.ts).
import { spawn } from 'node:child_process';
import { witnessCommand } from '../mailbox/helpers.js';
import { conformanceTests, SCENARIOS } from '../support/mcp-conformance.js';

/** The tool server is stateless: it opens no session, so the suite's multiple-streams check stops with a warning. */
const TABLE: Record<string, string> = { ...SCENARIOS, 'server-sse-multiple-streams': 'stateless server: there is no session to open several streams in' };

conformanceTests('witness a2a tool', TABLE, async () => {
  const [command, ...args] = witnessCommand();
  const proc = spawn(command!, [...args, 'a2a', 'tool', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve((JSON.parse(out.split('\n')[0]!) as { url: string }).url);
    });
    proc.once('exit', (code) => reject(new Error(`witness a2a tool exited ${code}`)));
  });
  return { url, close: () => void proc.kill('SIGTERM') };
});
