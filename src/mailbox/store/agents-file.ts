/**
 * @module
 * The agent list of a mailbox kept in its folder (agents.json), for the file
 * drivers: re-read only when the file changed, and synchronously, because a commit
 * reads it under the store's file lock.
 */
import { type AgentEntry, agentsStamp, readAgents } from '../config.js';

export class AgentsFile {
  private list: AgentEntry[] = [];
  private stamp = '';

  constructor(private readonly dir: string) {}

  /** Registered agents as of now. */
  now(): AgentEntry[] {
    const stamp = agentsStamp(this.dir);
    if (stamp !== this.stamp) {
      this.list = readAgents(this.dir);
      this.stamp = stamp;
    }
    return this.list;
  }
}
