// The official MCP conformance suite against `witness mailbox serve --http` (a real
// process), through a loopback proxy that adds the agent's bearer token: the 2025-11-25
// line (0.1.16) and the 2026-07-28 requirements (0.2.0-alpha.12), against one endpoint.
// The scenarios that apply to the mailbox pass; the others are listed with why they do
// not apply (test/support/mcp-conformance*.ts). The suite drives servers over HTTP only:
// stdio is covered by the SDK-client tests (mcp-stdio.test.ts).
import { describe } from 'vitest';
import { MAILBOX_SCENARIOS_2026 } from '../support/mcp-conformance-2026.js';
import {
  bearerProxy,
  conformanceTests,
  MAILBOX_SCENARIOS,
  SUITE_2025,
  SUITE_2026,
} from '../support/mcp-conformance.js';
import { makeMailbox, startHttp } from './helpers.js';

const serve = async () => {
  const mb = await makeMailbox(['alice', 'bob']);
  const server = await startHttp(mb.dir);
  const proxy = await bearerProxy(server.url, mb.tokens.alice!);
  return {
    url: proxy.url,
    async close() {
      await proxy.close();
      await server.stop();
    },
  };
};

describe('MCP 2025-11-25', () => conformanceTests('the mailbox (HTTP)', MAILBOX_SCENARIOS, serve, SUITE_2025));
describe('MCP 2026-07-28', () => conformanceTests('the mailbox (HTTP)', MAILBOX_SCENARIOS_2026, serve, SUITE_2026));
