/**
 * The mailbox's table for the conformance suite's 2026-07-28 requirements (0.2.0-alpha.12,
 * `--requirements 2026-07-28`): every scenario that revision requires or reports, with
 * whether it applies to the mailbox and, where it does not (or one of its checks does
 * not), why. As in the 2025 table, most scenarios call the reference "everything"
 * server's diagnostic tools, or need prompts, completions, elicitation, sampling or the
 * Tasks extension, none of which the mailbox offers.
 */
import type { ScenarioTable } from './mcp-conformance.js';

const EVERYTHING = "calls a diagnostic tool of the reference 'everything' server, which the mailbox does not have";
const EVERYTHING_RESOURCE =
  "reads a test:// resource of the reference 'everything' server; the mailbox offers only mailbox://inbox (read and listened to in test/mailbox/two-eras.test.ts)";
const NO_PROMPTS = 'no prompts capability';
const NO_INPUT = `the mailbox never asks the client for input (no elicitation, sampling or roots), and the scenario ${EVERYTHING}`;
const NO_TASKS =
  'the Tasks extension (io.modelcontextprotocol/tasks) is not offered: wait_for_message answers within its timeout and push rides subscriptions/listen (reported, never scored for 2026-07-28)';
const DIAGNOSTIC = (tool: string) =>
  `needs the everything server's diagnostic tool ${tool}; the suite reports it "not testable" here`;

export const MAILBOX_SCENARIOS_2026: ScenarioTable = {
  'server-stateless': {
    except: {
      'sep-2575-server-rejects-undeclared-capability': DIAGNOSTIC('test_missing_capability'),
      'sep-2575-missing-capability-http-400': DIAGNOSTIC('test_missing_capability'),
      'sep-2575-http-server-no-independent-requests-on-stream': DIAGNOSTIC('test_streaming_elicitation'),
      'sep-2575-server-no-log-without-loglevel': DIAGNOSTIC('test_logging_tool'),
      'sep-2575-server-sends-prompts-list-changed-on-subscription': NO_PROMPTS,
      'sep-2575-server-sends-tools-list-changed-on-subscription':
        "a SHOULD for servers whose tool list changes; the mailbox's never does, so no tools/list_changed is ever due",
    },
  },
  'tools-list': 'applies',
  'server-sse-multiple-streams': 'applies',
  'resources-list': 'applies',
  'sep-2164-resource-not-found': 'applies',
  'dns-rebinding-protection': 'applies',
  caching: { except: { 'sep-2549-prompts-list-caching-hints': `${NO_PROMPTS}: prompts/list is Method not found` } },
  'input-required-result-unsupported-methods': 'applies',
  'input-required-result-validate-input': 'applies',
  'http-header-validation': 'applies',
  'completion-complete': 'no prompts or resource templates to complete',
  'tools-call-simple-text': EVERYTHING,
  'tools-call-image': EVERYTHING,
  'tools-call-audio': EVERYTHING,
  'tools-call-embedded-resource': EVERYTHING,
  'tools-call-mixed-content': EVERYTHING,
  'tools-call-error': `${EVERYTHING} (an unknown tool is a -32602 error on the mailbox)`,
  'tools-call-with-progress': EVERYTHING,
  'resources-read-text': EVERYTHING_RESOURCE,
  'resources-read-binary': EVERYTHING_RESOURCE,
  'resources-templates-read': `${EVERYTHING_RESOURCE}; the mailbox has no resource templates`,
  'prompts-list': NO_PROMPTS,
  'prompts-get-simple': NO_PROMPTS,
  'prompts-get-with-args': NO_PROMPTS,
  'prompts-get-embedded-resource': NO_PROMPTS,
  'prompts-get-with-image': NO_PROMPTS,
  'input-required-result-basic-elicitation': NO_INPUT,
  'input-required-result-basic-sampling': NO_INPUT,
  'input-required-result-basic-list-roots': NO_INPUT,
  'input-required-result-request-state': NO_INPUT,
  'input-required-result-multiple-input-requests': NO_INPUT,
  'input-required-result-multi-round': NO_INPUT,
  'input-required-result-missing-input-response': NO_INPUT,
  'input-required-result-non-tool-request': NO_INPUT,
  'input-required-result-result-type': NO_INPUT,
  'input-required-result-tampered-state': NO_INPUT,
  'input-required-result-capability-check': NO_INPUT,
  'input-required-result-ignore-extra-params': NO_INPUT,
  'tasks-lifecycle': NO_TASKS,
  'tasks-capability-negotiation': NO_TASKS,
  'tasks-wire-fields': NO_TASKS,
  'tasks-request-state-removal': NO_TASKS,
  'tasks-mrtr-input': NO_TASKS,
  'tasks-request-headers': NO_TASKS,
  'tasks-dispatch-and-envelope': NO_TASKS,
  'tasks-status-notifications': NO_TASKS,
  'tasks-required-task-error': NO_TASKS,
  'tasks-mrtr-composition': NO_TASKS,
  'json-schema-2020-12': `${EVERYTHING} (json_schema_2020_12_tool; pending, never scored)`,
  'http-custom-header-server-validation': 'no mailbox tool declares x-mcp-header parameters (pending, never scored)',
};

const NO_RESOURCES = 'no resources capability: the evidence tool server offers one tool and nothing else';

/** `witness a2a tool`'s table: the mailbox's, less what needs resources. */
export const TOOL_SCENARIOS_2026: ScenarioTable = {
  ...MAILBOX_SCENARIOS_2026,
  'resources-list': NO_RESOURCES,
  'sep-2164-resource-not-found': `${NO_RESOURCES} (resources/read is Method not found, so the suite's SHOULDs about its error do not arise)`,
  'server-sse-multiple-streams':
    'the suite only notes (INFO) that streams work: nothing to pass or fail on a server with no server-to-client stream',
  caching: {
    except: {
      'sep-2549-prompts-list-caching-hints': `${NO_PROMPTS}: prompts/list is Method not found`,
      'sep-2549-resources-list-caching-hints': NO_RESOURCES,
      'sep-2549-resources-templates-list-caching-hints': NO_RESOURCES,
      'sep-2549-resources-read-caching-hints': NO_RESOURCES,
    },
  },
};
