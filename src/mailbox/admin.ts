/**
 * @module
 * Administrative changes to a mailbox directory that servers may be reading at the
 * same time: registering agents (under the directory lock, written atomically) and
 * recovering from an interrupted writer.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { WitnessError } from '../core/errors.js';
import { newToken, readAgents, readConfig, withAgent, writeJsonAtomic } from './config.js';
import { acquireLock, breakIfStale, hasStaleLock } from './lock.js';

export interface AddedAgent {
  name: string;
  /** The HTTP bearer token; shown once, only its hash is stored. */
  token: string;
}

export async function addAgent(dir: string, name: string, description?: string): Promise<AddedAgent> {
  readConfig(dir);
  const token = newToken();
  const lock = await acquireLock(dir);
  try {
    writeJsonAtomic(join(dir, 'agents.json'), { agents: withAgent(readAgents(dir), name, token, description) });
  } finally {
    lock.release();
  }
  return { name, token };
}

/** Breaks a dead writer's lock and rolls back its unfinished write. True if there was one. */
export function recoverMailbox(dir: string): boolean {
  if (!existsSync(join(dir, 'mailbox.json'))) throw new WitnessError('NOT_FOUND', `${dir} is not a mailbox (no mailbox.json).`);
  return hasStaleLock(dir) && breakIfStale(dir);
}
