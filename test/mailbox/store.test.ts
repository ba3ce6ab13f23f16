/** The shared store suites, once per implementation (PostgreSQL: a database per mailbox on the local server). */
import { runStoreFaultsSuite } from './store-faults-suite.js';
import { runStoreSuite } from './store-suite.js';

for (const kind of ['jsonl', 'sqlite', 'postgres'] as const) {
  runStoreSuite(kind);
  runStoreFaultsSuite(kind);
}
