import { defineConfig } from 'vitest/config';
import { lanes } from './test/support/lanes.js';

// Two lanes (test/support/lanes.ts): `unit` runs in-process only, `e2e` starts processes,
// databases, browsers and installed tools. `npm test` runs both; `--project unit` one.
const { unit, e2e } = lanes(import.meta.dirname);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    allowOnly: false,
    projects: [
      // In-process files share one module graph per worker (isolate: false): loading the SDKs
      // and zod again for each of ~110 files cost more than their tests (123 s → 41 s here).
      // A unit file that changes process-wide state (env, globals) puts it back.
      { extends: true, test: { name: 'unit', include: unit, isolate: false } },
      // Only the e2e lane needs the tools scripts/tools.mjs installs (runtimes, suites, node-llama-cpp).
      { extends: true, test: { name: 'e2e', include: [...e2e.keys()], globalSetup: ['test/support/global-setup.ts'] } },
    ],
  },
});
