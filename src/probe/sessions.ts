/**
 * @module
 * The mailbox servers' session log as the probe reads it (`serve --session-log`,
 * mailbox/session-log.ts): which protocol version each of the runtime's sessions
 * negotiated, and what was pushed to it. The server wrote it, so it says what went
 * over the wire, not what the runtime claims.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { SessionRecord } from '../mailbox/index.js';
import type { Negotiated } from './types.js';

/** Every record in the file, oldest first; a line that is not a record is passed over (a torn last line). */
export function readSessions(file: string): SessionRecord[] {
  if (!existsSync(file)) return [];
  const out: SessionRecord[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    try {
      const r = JSON.parse(line) as SessionRecord;
      if (typeof r.event === 'string' && typeof r.agent === 'string' && typeof r.at === 'string') out.push(r);
    } catch {
      // a torn line: the server was killed mid-write
    }
  }
  return out;
}

/** The versions `agent`'s sessions negotiated (initialize, or a 2026-07-28 server/discover); undefined when none did. */
export function negotiated(records: readonly SessionRecord[], agent: string): Negotiated | undefined {
  const inits = records.filter(
    (r): r is Extract<SessionRecord, { event: 'initialize' | 'discover' }> =>
      (r.event === 'initialize' || r.event === 'discover') && r.agent === agent,
  );
  if (inits.length === 0) return undefined;
  return {
    versions: [...new Set(inits.map((r) => r.protocol_version))],
    clients: [...new Set(inits.map((r) => `${r.client.name} ${r.client.version}`))],
    sessions: inits.length,
  };
}
