/**
 * @module
 * What both stores share: the cached agent list, and the three writing operations
 * funnelled through one group committer. A store supplies `commit`, which applies a
 * group of operations durably under its own cross-process lock.
 */
import type { Message, ToolName } from '../call-log.js';
import { type AgentEntry, agentsStamp, readAgents } from '../config.js';
import { GroupCommitter, type Pending } from './group-commit.js';
import type * as ops from './ops.js';
import type { AckResult, CallOutcome, FetchOptions, SendInput, SendResult } from './types.js';

export abstract class CommittingStore {
  /** The list as last read; `commit` refreshes it with `agents()` before applying a group. */
  protected agentList: AgentEntry[] = [];
  private stamp = '';
  protected readonly committer = new GroupCommitter<ops.StoreOp, ops.StoreResult>(async (group) => this.commit(group));

  constructor(readonly dir: string) {}

  /** Applies one group of operations durably and settles each of them. */
  protected abstract commit(group: Pending<ops.StoreOp, ops.StoreResult>[]): void | Promise<void>;

  async agents(): Promise<AgentEntry[]> {
    return this.agentsNow();
  }

  /** Registered agents, re-read only when agents.json changed (synchronously: commits run under a file lock). */
  protected agentsNow(): AgentEntry[] {
    const stamp = agentsStamp(this.dir);
    if (stamp !== this.stamp) {
      this.agentList = readAgents(this.dir);
      this.stamp = stamp;
    }
    return this.agentList;
  }

  send(from: string, input: SendInput): Promise<SendResult> {
    return this.committer.submit({ kind: 'send', from, input }) as Promise<SendResult>;
  }

  fetch(agent: string, options: FetchOptions): Promise<Message[]> {
    return this.committer.submit({ kind: 'fetch', agent, options }) as Promise<Message[]>;
  }

  ack(agent: string, id: string, reply?: string): Promise<AckResult> {
    return this.committer.submit({ kind: 'ack', agent, id, ...(reply !== undefined ? { reply } : {}) }) as Promise<AckResult>;
  }

  async record(agent: string, tool: ToolName, outcome: CallOutcome): Promise<void> {
    await this.committer.submit({ kind: 'record', agent, tool, outcome });
  }
}
