/**
 * @module
 * The per-agent send rate of a PostgreSQL mailbox, shared by every server process:
 * the same token bucket as limits.ts's `RateLimiter`, kept in one row per agent and
 * updated by one statement (an upsert holds the row's lock, so two processes never
 * both take the last token). Time is the database's clock, not each host's.
 */
import type { Pool } from 'pg';
import { rateLimitError, type SendRate } from '../../limits.js';
import { databaseFailure } from './db.js';

// In an UPDATE's SET every expression reads the row as it was, so the refill is computed once per column.
const _REFILL = 'least($2::float8, r.tokens + (EXCLUDED.at_ms - r.at_ms) * $2::float8 / 60000.0)';
const TAKE = `INSERT INTO mailbox_rate AS r (agent, tokens, at_ms, taken)
VALUES ($1, $2::float8 - 1, extract(epoch FROM clock_timestamp()) * 1000, true)
ON CONFLICT (agent) DO UPDATE SET
  taken = ${_REFILL} >= 1,
  tokens = ${_REFILL} - CASE WHEN ${_REFILL} >= 1 THEN 1 ELSE 0 END,
  at_ms = EXCLUDED.at_ms
RETURNING taken, tokens`;

export class PostgresSendRate implements SendRate {
  constructor(
    private readonly pool: Pool,
    private readonly perMinute: number,
  ) {}

  async take(agent: string): Promise<void> {
    if (this.perMinute <= 0) return;
    const row = (
      await this.pool
        .query<{ taken: boolean; tokens: number }>(TAKE, [agent, this.perMinute])
        .catch((error: unknown) => {
          throw databaseFailure(error);
        })
    ).rows[0]!;
    if (!row.taken) throw rateLimitError(agent, this.perMinute, row.tokens);
  }
}
