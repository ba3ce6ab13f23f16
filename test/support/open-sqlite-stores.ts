/**
 * Child process of test/mailbox/sqlite-open-race.test.ts: opens and closes the SQLite
 * store of each mailbox folder given, one folder per round, each round starting at
 * `start + round × gap` ms (wall clock) so that every child opens the same new file at
 * the same moment. Prints one line per failed open; exits 0.
 *
 *   node --import tsx test/support/open-sqlite-stores.ts START GAP_MS KEY DIR…
 */
import { openStore } from '../../src/mailbox/index.js';

const [start, gap, keyPath, ...dirs] = process.argv.slice(2);
for (const [round, dir] of dirs.entries()) {
  const at = Number(start) + round * Number(gap);
  while (Date.now() < at) {} // a busy wait: a timer's wake-up would spread the opens apart
  try {
    const store = await openStore(dir, { keyPath });
    await store.close();
  } catch (error) {
    console.log(`round ${round}: ${(error as { code?: string }).code ?? ''} ${(error as Error).message}`);
  }
}
