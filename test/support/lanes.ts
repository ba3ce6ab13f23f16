/**
 * The two test lanes, decided by what each test file touches, read from its source
 * and from the test helpers it imports (transitively):
 *
 * - **unit**: in-process only — no child process, no PostgreSQL, no browser, no
 *   runtime or suite from .tools/, nothing from the network. `npm run test:unit`.
 * - **e2e**: everything else. `npm run test:e2e`.
 *
 * A file is e2e when its source or a helper's matches one of E2E_MARKERS, or when it
 * is named in E2E_FILES (what it starts lives in src/, where the markers do not look).
 * `npm test` runs both lanes. test/lanes.test.ts checks that every test file is in
 * exactly one lane.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** What, in a test's source or its helpers', means it leaves the process. */
export const E2E_MARKERS: ReadonlyArray<[RegExp, string]> = [
  [/node:child_process|\bspawn(Sync)?\(|\bexecFile(Sync)?\(|\bexecSync\(/, 'starts processes'],
  [/freshDatabase|from 'pg'|WITNESS_TEST_DATABASE_URL|store: 'postgres'|postgres:\/\//, 'needs PostgreSQL'],
  [/playwright|openPage|hasChromium/, 'drives Chromium'],
  [/\.tools\b|runtimeBinary|installTools/, 'uses tools installed in .tools/'],
  [/golang|\bgo build\b/, 'builds Go'],
];

/** Files whose processes are started by the code they test (src/), with what they start. */
export const E2E_FILES: Readonly<Record<string, string>> = {
  'test/a2a/e12.test.ts': "E12 starts the child agent's and the MCP tool's processes",
  'test/a2a/e12-launch.test.ts': "starts E12's child agent and MCP tool processes",
  'test/probe/adversaries.test.ts': 'the probe starts mailbox server processes for each no-model agent',
  'test/probe/cli.test.ts': 'witness probe starts mailbox servers and looks for installed runtimes',
  'test/probe/schema.test.ts': 'runs probes to have reports to validate',
  'test/docs/commands.test.ts': 'runs every runnable command of the docs, servers and sweeps included',
  'test/a2a/tool-server-memory.test.ts':
    "1,000 SDK client connections and the heap measured around them: a measurement, not a unit's check",
  'test/sim/reference-prompts.test.ts': 'runs the reference implementation under python3',
};

const _SELF = resolve(import.meta.dirname, 'lanes.ts');
/** The test folder: only helpers in it are followed. */
const _TESTS = resolve(import.meta.dirname, '..');

export interface Lanes {
  unit: string[];
  e2e: Map<string, string>;
}

/** Every test file under `root`/test, in its lane (paths relative to `root`). */
export function lanes(root: string): Lanes {
  const files = _testFiles(join(root, 'test')).map((f) => relative(root, f));
  const cache = new Map<string, string | undefined>();
  const unit: string[] = [];
  const e2e = new Map<string, string>();
  for (const file of files.sort()) {
    const why = E2E_FILES[file] ?? _why(resolve(root, file), cache, new Set());
    if (why) e2e.set(file, why);
    else unit.push(file);
  }
  return { unit, e2e };
}

/** Why `path` (or a test helper it imports) leaves the process, or undefined. */
function _why(path: string, cache: Map<string, string | undefined>, seen: Set<string>): string | undefined {
  if (cache.has(path)) return cache.get(path);
  // This module names the markers it looks for; it starts nothing.
  if (seen.has(path) || path === _SELF) return undefined;
  seen.add(path);
  let source: string;
  try {
    source = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  let why = E2E_MARKERS.find(([marker]) => marker.test(source))?.[1];
  for (const spec of source.matchAll(/from '(\.\.?\/[^']+)'/g)) {
    if (why) break;
    const target = resolve(dirname(path), spec[1]!.replace(/\.js$/, '.ts'));
    // Only test helpers: what src/ does is not a test's lane (E2E_FILES names those).
    if (!target.startsWith(`${_TESTS}${sep}`)) continue;
    const helper = _why(target, cache, seen);
    if (helper) why = `${helper} (through ${relative(dirname(path), target)})`;
  }
  cache.set(path, why);
  return why;
}

function _testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return _testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}
