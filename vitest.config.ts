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
      { extends: true, test: { name: 'unit', include: unit } },
      // Only the e2e lane needs the tools scripts/tools.mjs installs (runtimes, suites, node-llama-cpp).
      { extends: true, test: { name: 'e2e', include: [...e2e.keys()], globalSetup: ['test/support/global-setup.ts'] } },
    ],
  },
});
