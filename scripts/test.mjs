// Runs the whole test suite with vitest, then prints the plain closing line
// `N passed, N failed` (with `, N skipped` when any were) that CI reads.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const outDir = 'test-output';
mkdirSync(outDir, { recursive: true });
const report = join(outDir, 'vitest-report.json');
const args = [
  'vitest',
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${report}`,
  ...process.argv.slice(2),
];
const run = spawnSync('npx', args, { stdio: 'inherit' });

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(report)) {
  const result = JSON.parse(readFileSync(report, 'utf8'));
  passed = result.numPassedTests ?? 0;
  failed = result.numFailedTests ?? 0;
  // A file that failed to load has failed suites but no failed test: count it once.
  if (failed === 0 && (result.numFailedTestSuites ?? 0) > 0) failed = 1;
  skipped = (result.numPendingTests ?? 0) + (result.numTodoTests ?? 0);
} else {
  failed = 1;
}
const code = run.status ?? 1;
if (code !== 0 && failed === 0) failed = 1; // a run that crashed must not read as green
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(code);
