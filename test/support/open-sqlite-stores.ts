/**
 * Child process of test/core/sqlite-open-race.test.ts: opens and closes one new SQLite
 * file per round — a mailbox folder's store, or a nonce store file — each round
 * starting at `start + round × gap` ms (wall clock), so that every child opens the
 * same new file at the same moment. Prints one line per failed open; exits 0.
 *
 *   node --import tsx test/support/open-sqlite-stores.ts mailbox START GAP_MS KEY DIR…
 *   node --import tsx test/support/open-sqlite-stores.ts nonces START GAP_MS FILE…
 */
import { SqliteNonceStore } from '../../src/attest/nonce-store.js';
import { openStore } from '../../src/mailbox/index.js';

const [kind, start, gap, ...rest] = process.argv.slice(2);
const keyPath = kind === 'mailbox' ? rest.shift() : undefined;
for (const [round, path] of rest.entries()) {
  const at = Number(start) + round * Number(gap);
  while (Date.now() < at) {} // a busy wait: a timer's wake-up would spread the opens apart
  try {
    if (kind === 'mailbox') await (await openStore(path, { keyPath })).close();
    else new SqliteNonceStore(path).close();
  } catch (error) {
    console.log(`round ${round}: ${(error as { code?: string }).code ?? ''} ${(error as Error).message}`);
  }
}
