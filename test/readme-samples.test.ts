// The README's sample tables are the real output of their commands (scripts/readme-samples.mts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { applySamples, driftedSamples, README, runSamples, SAMPLES, sampleNames } from '../scripts/readme-samples.mjs';

describe('README samples', () => {
  const readme = readFileSync(README, 'utf8');
  it('has a region for every sample the script knows, and the script knows every region', () => {
    expect(sampleNames(readme).sort()).toEqual(Object.keys(SAMPLES).sort());
  });
  it('are what their commands print today (npm run docs:readme rewrites them)', async () => {
    const outputs = await runSamples(readme);
    expect(driftedSamples(readme, outputs), 'README.md samples drifted: run npm run docs:readme').toEqual([]);
    expect(applySamples(readme, outputs)).toBe(readme);
  });
  it('are found to drift when a number in a region changes', async () => {
    const outputs = await runSamples(readme);
    const edited = readme.replace(/(<!-- sample:smoke -->\n```\n[\s\S]*?)40 \(17–69\)/, '$150 (24–76)');
    expect(edited).not.toBe(readme);
    expect(driftedSamples(edited, outputs)).toEqual(['smoke']);
  });
});
