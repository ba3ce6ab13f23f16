/**
 * @module
 * The `--store` option of the mailbox commands: a store kind, or a PostgreSQL URL.
 */
import { isPostgresUrl } from '../../attest/postgres.js';
import { WitnessError } from '../../core/errors.js';
import type { StoreKind } from '../../mailbox/index.js';

/** A --store value: a kind, or a PostgreSQL URL (which means postgres). */
export function storeOption(value: string): { store: StoreKind; database?: string } {
  if (value === 'jsonl' || value === 'sqlite') return { store: value };
  if (value === 'postgres' || isPostgresUrl(value)) return { store: 'postgres', database: value };
  throw new WitnessError(
    'USAGE',
    `--store ${JSON.stringify(value)} is not a store: give jsonl, sqlite, a PostgreSQL URL (postgres://USER@HOST/DB) or postgres (the URL in WITNESS_DATABASE_URL).`,
  );
}
