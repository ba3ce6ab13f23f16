// Runs every performance script in bench/ (each prints ratios against a baseline it
// measures in the same run). Build first, so worker threads start from compiled code.
// Run: npm run bench            or: npm run bench -- sim attest   (a subset)
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const wanted = process.argv.slice(2);
const scripts = readdirSync('bench')
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.replace(/\.ts$/, ''))
  .filter((name) => wanted.length === 0 || wanted.includes(name));
let failed = 0;
for (const name of scripts) {
  console.log(`\n== bench/${name}.ts`);
  const run = spawnSync('npx', ['tsx', `bench/${name}.ts`], { stdio: 'inherit' });
  if (run.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
