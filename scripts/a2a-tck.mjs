// Runs the A2A TCK (a2aproject/a2a-tck: not on npm, so bring a checkout) against
// `witness a2a serve`, once over JSON-RPC and once over HTTP+JSON, and prints its result
// as the table in docs/a2a.md: counts, then every test that did not pass with the TCK
// defect that makes it fail. Exit 0 when every failure is an expected one, 1 when
// another test failed or an expected failure passed (the table is stale), 2 on usage
// or a missing Python package.
//
//   node scripts/a2a-tck.mjs /tmp/a2a-tck [--json]
//
// The path is a checkout, an unpacked tree, or a git directory (a bare clone): from a
// git directory the pinned commit (TCK_COMMIT) is extracted to a temporary folder, so
// the EXPECTED table always meets the TCK it was written for. The TCK runs under
// Debian's Python packages (no pip):
//   apt-get install python3-pytest python3-httpx python3-jsonschema python3-requests python3-grpcio python3-protobuf
// It sends no A2A-Version header (which means 0.3), so A2A_AUTH_HEADERS carries
// `A2A-Version: 1.0`. Its raw JSON-RPC tests post to --sut-url itself, so that is the
// card's JSON-RPC URL in both runs; its transport clients take their endpoints from the
// card. The servers run from source (tsx), each with a fresh key, on free ports.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');
const WITNESS = [
  process.execPath,
  '--import',
  pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href,
  join(ROOT, 'src/cli/main.ts'),
];
const MODULES = ['pytest', 'httpx', 'jsonschema', 'requests', 'grpc', 'google.protobuf'];
/** The TCK commit the EXPECTED table was written for. */
const TCK_COMMIT = '410ba92e1b264df895e1fe6eccfe22db7aeaab06';
/** Each run: the TCK's transport name, and how docs/a2a.md names it. */
const RUNS = [
  { transport: 'jsonrpc', name: 'JSON-RPC' },
  { transport: 'rest', name: 'HTTP+JSON' },
];

/**
 * Tests that fail against this agent, each for a defect of the TCK (docs/a2a.md, "A2A
 * TCK", has the evidence). `transports` limits an entry to the runs it concerns.
 */
const BLOCKING =
  'sends a blocking SendMessage (no returnImmediately), which A2A v1.0 §3.2.2 says returns only once the task is terminal (here COMPLETED)';
const LIST_HELPER = `its helper create_test_task ${BLOCKING}, then polls GetTask until the task is TASK_STATE_WORKING, which a finished task never is again`;
/** The ListTasks tests that create their tasks with create_test_task (the others, which need none, pass). */
const LIST_TESTS = [
  'TestBasicListing::test_list_all_tasks',
  'TestBasicListing::test_list_tasks_validates_required_fields',
  'TestBasicListing::test_list_tasks_sorted_by_timestamp_descending',
  'TestFiltering::test_filter_by_context_id',
  'TestFiltering::test_filter_by_status',
  'TestFiltering::test_filter_by_last_updated_after',
  'TestFiltering::test_combined_filters',
  'TestPagination::test_custom_page_size',
  'TestPagination::test_page_token_navigation',
  'TestPagination::test_last_page_detection',
  'TestPagination::test_total_size_accuracy',
  'TestHistoryLimiting::test_history_length_zero',
  'TestHistoryLimiting::test_history_length_custom',
  'TestHistoryLimiting::test_history_length_exceeds_actual',
  'TestArtifactInclusion::test_artifacts_excluded_by_default',
  'TestArtifactInclusion::test_artifacts_included_when_requested',
  'TestEdgeCasesAndErrors::test_default_page_size_is_50',
];
const EXPECTED = {
  'test_a2a_v030_new_methods.py::TestMethodMappingCompliance::test_core_method_mapping_compliance': {
    why: `${BLOCKING}, then cancels that task: §3.1.5 makes a completed task not cancelable (TaskNotCancelableError, what the agent answers)`,
  },
  'test_tasks_cancel_method.py::test_tasks_cancel_valid': {
    why: `${BLOCKING}, then expects to cancel that task: §3.1.5 makes a completed task not cancelable (TaskNotCancelableError, what the agent answers)`,
  },
  'test_message_send_method.py::test_message_send_continue_task': {
    why: `${BLOCKING}, then sends that task a second message and expects success: §3.1.1 makes a task in a terminal state take no message (UnsupportedOperationError, what the agent answers)`,
  },
  'test_state_transitions.py::test_task_history_length': {
    why: `${BLOCKING}, then sends that task three more messages and expects success: §3.1.1 makes a task in a terminal state take no message (UnsupportedOperationError, what the agent answers)`,
  },
  ...Object.fromEntries(LIST_TESTS.map((id) => [`test_tasks_list_method.py::${id}`, { why: LIST_HELPER }])),
  'test_a2a_error_codes_enhanced.py::test_push_notification_not_supported_error_32003_enhanced': {
    why: 'the test calls its own helper transport_create_task_push_notification_config with one argument too many (TypeError) before it sends anything',
  },
  'test_a2a_error_codes.py::test_push_notification_not_supported_error_32003': {
    transports: ['rest'],
    why: "the test calls send_raw_json_rpc on the TCK's own RESTClient, which has no such method (AttributeError) before it sends anything",
  },
  'test_agent_card_security.py::test_public_agent_card_access_control': {
    why: "the test fetches the card at --sut-url + /.well-known/agent-card.json, under the JSON-RPC path, where the TCK's raw tests need --sut-url; the card is at the host root (RFC 8615), where the TCK's own card fetch, used by every other test, finds it",
  },
  'test_agent_card_security.py::test_sensitive_information_protection': {
    why: 'a pattern match: it flags 127.0.0.1 in the card\'s URLs (the loopback address the agent is bound to; its own FIXME allows only "localhost") and "test" in "attested … url" (the pattern spans the whole card)',
  },
};

function usage(message) {
  process.stderr.write(
    `${message}\nUsage: node scripts/a2a-tck.mjs TCK [--json]   (a checkout, an unpacked tree or a git directory of a2aproject/a2a-tck)\n`,
  );
  process.exit(2);
}

/** A python3 that has the TCK's modules: $PYTHON, then python3 on PATH, then Debian's. */
function findPython() {
  for (const python of [process.env.PYTHON, 'python3', '/usr/bin/python3'].filter(Boolean)) {
    const probe = spawnSync(python, ['-c', MODULES.map((m) => `import ${m}`).join('; ')], { stdio: 'ignore' });
    if (probe.status === 0) return python;
  }
  return undefined;
}

/** The TCK tree to run and the commit it is: a git directory gives TCK_COMMIT, extracted into `work`. */
function tckTree(path, work) {
  const git = (...args) => spawnSync('git', ['-C', path, ...args], { encoding: 'utf8' });
  const head = git('rev-parse', 'HEAD');
  const isGit = head.status === 0;
  if (isGit && git('cat-file', '-e', `${TCK_COMMIT}^{commit}`).status === 0) {
    const tree = join(work, 'a2a-tck');
    const unpack = spawnSync('sh', [
      '-c',
      'mkdir -p "$2" && git -C "$1" archive "$3" | tar -x -C "$2"',
      'sh',
      path,
      tree,
      TCK_COMMIT,
    ]);
    if (unpack.status !== 0) throw new Error(`cannot extract ${TCK_COMMIT} from ${path}`);
    return { tree, commit: TCK_COMMIT };
  }
  if (!existsSync(join(path, 'tests', 'mandatory')))
    usage(`${path} is not an a2a-tck checkout (no tests/mandatory) nor a git directory holding ${TCK_COMMIT}.`);
  return { tree: path, commit: isGit ? head.stdout.trim() : 'unknown (not a git checkout)' };
}

/** Starts `witness ARGS --json` and resolves with the JSON line it prints when ready. */
function start(args, processes) {
  return new Promise((resolveLine, reject) => {
    const proc = spawn(WITNESS[0], [...WITNESS.slice(1), ...args, '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
    processes.push(proc);
    let out = '';
    proc.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolveLine(JSON.parse(out.split('\n')[0]));
    });
    proc.once('exit', (code) => reject(new Error(`witness ${args.join(' ')} exited ${code}`)));
  });
}

/** Each test case of a JUnit XML report: its id (file::class::name) and outcome. */
function outcomes(xml) {
  const cases = [];
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const attrs = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((a) => [a[1], a[2]]));
    const parts = attrs.classname.split('.');
    const file = parts.findIndex((p) => p.startsWith('test_'));
    const id = [`${parts[file]}.py`, ...parts.slice(file + 1), attrs.name].join('::');
    const body = m[2] ?? '';
    const outcome = /<(failure|error)\b/.test(body) ? 'failed' : /<skipped\b/.test(body) ? 'skipped' : 'passed';
    cases.push({ id, outcome });
  }
  return cases;
}

function expectedReason(id, transport) {
  for (const [pattern, entry] of Object.entries(EXPECTED)) {
    if (entry.transports && !entry.transports.includes(transport)) continue;
    if (id === pattern) return entry.why;
  }
  return undefined;
}

/** One pytest run of tests/mandatory over `transport`; its cases. */
function runTck(python, tree, sutUrl, transport, work) {
  const report = join(work, `tck-${transport}.xml`);
  const args = ['-m', 'pytest', 'tests/mandatory', '--sut-url', sutUrl, '--transports', transport];
  spawnSync(python, [...args, '-p', 'no:cacheprovider', '-q', `--junitxml=${report}`], {
    cwd: tree,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, A2A_AUTH_HEADERS: JSON.stringify({ 'A2A-Version': '1.0' }) },
    timeout: 900_000,
  });
  if (!existsSync(report)) throw new Error('the TCK wrote no report; run its pytest command by hand to see why');
  return outcomes(readFileSync(report, 'utf8'));
}

function summarise(cases, transport) {
  const count = (o) => cases.filter((c) => c.outcome === o).length;
  const failed = cases.filter((c) => c.outcome === 'failed');
  return {
    transport,
    passed: count('passed'),
    failed: failed.length,
    skipped: count('skipped'),
    failures: failed.map((c) => ({ id: c.id, why: expectedReason(c.id, transport) ?? null })),
    // An expected failure that passes: the table is stale and must be updated.
    stale: cases.filter((c) => c.outcome === 'passed' && expectedReason(c.id, transport)).map((c) => c.id),
  };
}

function print(commit, runs) {
  for (const [i, run] of runs.entries()) {
    const unexpected = run.failures.filter((f) => !f.why);
    console.log(
      `${i ? '\n' : ''}A2A TCK ${commit.slice(0, 7)}, tests/mandatory, ${RUNS.find((r) => r.transport === run.transport).name}, A2A-Version 1.0: ${run.passed} passed, ${run.failed} failed (${run.failed - unexpected.length} expected), ${run.skipped} skipped\n`,
    );
    console.log('| test | why it fails |\n|---|---|');
    for (const f of run.failures) console.log(`| \`${f.id}\` | ${f.why ?? '**unexpected**'} |`);
    if (unexpected.length > 0) console.log(`\nUnexpected failures: ${unexpected.map((f) => f.id).join(', ')}`);
    if (run.stale.length > 0) console.log(`\nExpected to fail, but passed (update EXPECTED): ${run.stale.join(', ')}`);
  }
}

async function main() {
  const [path, ...flags] = process.argv.slice(2);
  if (!path) usage('Give the path of an a2a-tck checkout.');
  if (flags.some((f) => f !== '--json')) usage(`Unknown option ${flags.find((f) => f !== '--json')}.`);
  const python = findPython();
  if (!python)
    usage(
      `No python3 with ${MODULES.join(', ')}. On Debian: apt-get install python3-pytest python3-httpx python3-jsonschema python3-requests python3-grpcio python3-protobuf`,
    );
  const work = mkdtempSync(join(tmpdir(), 'witness-tck-'));
  const processes = [];
  try {
    const { tree, commit } = tckTree(resolve(path), work);
    const key = join(work, 'child.key.json');
    if (
      spawnSync(WITNESS[0], [...WITNESS.slice(1), 'keys', 'new', '--deployer', 'org-child', '--out', key], {
        stdio: 'ignore',
      }).status !== 0
    )
      throw new Error('witness keys new failed');
    const tool = await start(['a2a', 'tool'], processes);
    const agent = await start(['a2a', 'serve', '--key', key, '--tool', tool.url], processes);
    const runs = RUNS.map(({ transport }) =>
      summarise(runTck(python, tree, `${agent.url}/a2a/jsonrpc`, transport, work), transport),
    );
    if (flags.includes('--json')) console.log(JSON.stringify({ commit, pinned: TCK_COMMIT, runs }, null, 2));
    else print(commit, runs);
    return runs.every((r) => r.failures.every((f) => f.why) && r.stale.length === 0) ? 0 : 1;
  } finally {
    for (const proc of processes) proc.kill('SIGTERM');
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`a2a-tck: ${error.message}\n`);
    process.exit(1);
  },
);
