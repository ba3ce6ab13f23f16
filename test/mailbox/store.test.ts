/** The shared store suite, once per implementation. */
import { runStoreSuite } from './store-suite.js';

runStoreSuite('jsonl');
runStoreSuite('sqlite');
