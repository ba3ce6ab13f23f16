// The official MCP conformance suite against `witness a2a tool` (a real process), for
// MCP 2025-11-25 (0.1.16) and 2026-07-28 (0.2.0-alpha.12) on one endpoint. The
// scenarios that apply pass; the others are listed with why they do not apply
// (test/support/mcp-conformance*.ts).
import { spawn } from 'node:child_process';
import { describe } from 'vitest';
import { witnessCommand } from '../mailbox/helpers.js';
import { TOOL_SCENARIOS_2026 } from '../support/mcp-conformance-2026.js';
import { conformanceTests, SCENARIOS, type ScenarioTable, SUITE_2025, SUITE_2026 } from '../support/mcp-conformance.js';

/** The tool server is stateless: it opens no session, so the suite's multiple-streams check stops with a warning. */
const TABLE: ScenarioTable = {
  ...SCENARIOS,
  'server-sse-multiple-streams': 'stateless server: there is no session to open several streams in',
};

const serve = async () => {
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
};

describe('MCP 2025-11-25', () => conformanceTests('witness a2a tool', TABLE, serve, SUITE_2025));
describe('MCP 2026-07-28', () => conformanceTests('witness a2a tool', TOOL_SCENARIOS_2026, serve, SUITE_2026));
