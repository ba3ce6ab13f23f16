// The official MCP conformance suite against `witness mailbox serve --http` (a real
// process), through a loopback proxy that adds the agent's bearer token. The scenarios
// that apply to the mailbox pass; the others are listed with why they do not apply
// (test/support/mcp-conformance.ts). The suite drives servers over HTTP only: stdio is
// covered by the SDK-client tests (mcp-stdio.test.ts).
import { bearerProxy, conformanceTests, MAILBOX_SCENARIOS } from '../support/mcp-conformance.js';
import { makeMailbox, startHttp } from './helpers.js';

conformanceTests('the mailbox (HTTP)', MAILBOX_SCENARIOS, async () => {
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
});
