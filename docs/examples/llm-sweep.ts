// An LLM sweep from TypeScript: the same backends, recording, replay, prompt-pack
// checks and signing as `witness sim --agents llm --record … --sign KEY` (docs/llm.md).
// test/sim/docs-example.test.ts runs this file against a scripted OpenAI-compatible server.
import { loadKeyDirectory, readKeyFile } from 'agent-witness/attest';
import { openModelAgents, parseExperiment, replayExperiment, runExperiment, verifyResults } from 'agent-witness/sim';

const endpoint = process.env.WITNESS_ENDPOINT ?? 'http://127.0.0.1:8000/v1';
const experiment = parseExperiment({
  name: 'qwen-small',
  seed: 7,
  runs: 2,
  grid: { agents: 'llm', model: 'Qwen/Qwen3-14B', honest: 4, byzantine: [0, 1], byzantineAgents: 'policy', byzantineStrategy: 'split', rounds: 5 },
});
// `witness keys new --deployer lab --out lab.key.json`; a verifier trusts it with `witness keys add`.
const sign = { key: readKeyFile('lab.key.json') };

// One backend per model, every call appended to the cassette.
const agents = await openModelAgents(experiment, { endpoints: [endpoint], record: 'qwen-small.cassette.jsonl' });
try {
  const summary = await runExperiment({ experiment, out: 'qwen-small.jsonl', agents, concurrency: 8, sign });
  console.log(`${summary.ran} runs played, ${summary.skipped} already in qwen-small.jsonl`);
} finally {
  await agents.close();
}

// The same sweep again with no model: every answer comes from the cassette, which
// refuses a call whose prompt, prompt pack or sampling differ from the recording.
const recorded = replayExperiment('qwen-small.cassette.jsonl');
const replay = await openModelAgents(recorded, { replay: 'qwen-small.cassette.jsonl' });
try {
  await runExperiment({ experiment: recorded, out: 'qwen-small.replay.jsonl', agents: replay, concurrency: 8, sign });
} finally {
  await replay.close();
}

// Both files are signed, and both checkpoints sign the cassette's SHA-256: the replay is tied to the recording.
for (const file of ['qwen-small.jsonl', 'qwen-small.replay.jsonl']) {
  const result = verifyResults(file, { directory: loadKeyDirectory('trusted.json'), cassette: 'qwen-small.cassette.jsonl' });
  console.log(`${file}: ${result.ok ? 'valid' : result.problems.map((p) => `line ${p.line ?? '-'} ${p.code}`).join(', ')}`);
}
