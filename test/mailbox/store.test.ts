/** The shared store suites, once per implementation. */
import { runStoreFaultsSuite } from './store-faults-suite.js';
import { runStoreSuite } from './store-suite.js';

for (const kind of ['jsonl', 'sqlite'] as const) {
  runStoreSuite(kind);
  runStoreFaultsSuite(kind);
}
