/**
 * Bench: prompts per second from a checkout of the reference (`--prompts reference:PATH`)
 * through one long-lived bridge, against the baseline of starting python3 with the
 * bridge for every prompt (what a bridge per call would cost), measured in the same
 * run, and against our own pack renderer. A sweep of the paper's grids asks ~10^5–10^6
 * questions, so the per-call cost decides whether the bridge can live per call.
 *
 * Run: npx tsx bench/reference-prompts.ts [PATH] [--prompts N]
 *      PATH: a checkout of the reference (default: the stand-in in test/fixtures)
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sealRound } from '../src/sim/network.js';
import { loadPromptPack } from '../src/sim/prompts/pack.js';
import { BRIDGE_SCRIPT, openReferencePrompts, referenceFolder } from '../src/sim/prompts/reference.js';
import { renderRequest } from '../src/sim/prompts/render.js';
import type { GameRules, VoteView } from '../src/sim/types.js';

const args = process.argv.slice(2);
const countArg = args.indexOf('--prompts');
const count = countArg >= 0 ? Number(args[countArg + 1]) : 2000;
const path =
  args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--prompts') ??
  join(import.meta.dirname, '..', 'test', 'fixtures', 'reference-standin');
const spawned = Math.max(5, Math.round(count / 100));

/** Round 10 of 16 agents, as agent_3 sees it before proposing. */
function view(i: number): VoteView {
  const ids = Array.from({ length: 16 }, (_, k) => `agent_${k}`);
  const history = Array.from({ length: 9 }, (_, r) =>
    sealRound(
      r + 1,
      ids,
      ids.map((_, k) => (r * k + i) % 51),
      ids.map((id) => `${id} thinks ${r} is a fine round to agree on a value near the middle`),
    ),
  );
  const rules = { totalAgents: 16, range: [0, 50], maxRounds: 50, awareness: 'may_exist' } as GameRules;
  const notes = Array.from({ length: 9 }, (_, r) => ({
    round: r + 1,
    text: `note of round ${r + 1}: keep to the plurality`,
  }));
  return {
    id: 'agent_3',
    role: 'honest',
    round: 10,
    rules,
    initialValue: 17,
    currentValue: i % 51,
    history,
    notes,
    proposals: [],
    proposalValues: [],
  };
}

const pack = loadPromptPack();
const prompts = await openReferencePrompts(path, { pack });
const views = Array.from({ length: count }, (_, i) => view(i));

// Long-lived bridge, every question of a round in flight at once (as the engine asks them).
let t = performance.now();
for (let i = 0; i < count; i += 16) await Promise.all(views.slice(i, i + 16).map((v) => prompts.render('decide', v)));
const bridgeRate = count / ((performance.now() - t) / 1000);
await prompts.close();

// Baseline: one python3 start per prompt.
const line = `${JSON.stringify({ stage: 'decide', attempt: 1, id: 'agent_3', role: 'honest', awareness: 'may_exist', range: [0, 50], round: 10, max_rounds: 50, initial_value: 17, current_value: 3, history: [], notes: [] })}\n`;
const dir = referenceFolder(path);
t = performance.now();
for (let i = 0; i < spawned; i++) {
  const r = spawnSync(process.env.WITNESS_PYTHON ?? 'python3', [BRIDGE_SCRIPT, dir], { input: line, encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout.includes('"user"')) throw new Error(`bridge failed: ${r.stdout}${r.stderr}`);
}
const spawnRate = spawned / ((performance.now() - t) / 1000);

t = performance.now();
for (const v of views) renderRequest(pack, 'decide', v);
const packRate = count / ((performance.now() - t) / 1000);

console.log(`checkout: ${dir}`);
console.log(`long-lived bridge: ${bridgeRate.toFixed(0)} prompts/s (${count} prompts, 16 in flight)`);
console.log(`python3 per prompt (baseline): ${spawnRate.toFixed(1)} prompts/s (${spawned} starts)`);
console.log(`our pack renderer: ${packRate.toFixed(0)} prompts/s`);
console.log(
  `ratio long-lived / per prompt: ${(bridgeRate / spawnRate).toFixed(0)}×; pack / bridge: ${(packRate / bridgeRate).toFixed(1)}×`,
);
