/**
 * @module
 * Wake-ups across server processes and hosts for a PostgreSQL mailbox: one
 * connection per process LISTENs on the mail and agent channels (db.ts);
 * a send NOTIFYs its recipient inside its transaction, so the notification arrives
 * only once the message is committed. A lost connection is reconnected with
 * back-off; meanwhile `listening` is false (waiters poll often and the agent cache
 * is not trusted), and on reconnection everyone is woken once, because mail may
 * have arrived unheard.
 */
import type { Client } from 'pg';
import { openClient } from '../../../attest/postgres.js';
import { AGENTS_CHANNEL, MAIL_CHANNEL } from './db.js';

const RETRY_MS = [100, 250, 500, 1000, 2000, 5000] as const;

export class MailListener {
  /** An agent's name when mail was committed for it; undefined when anyone may have mail. */
  onMail: (agent: string | undefined) => void = () => {};
  /** The agent list changed (or may have). */
  onAgents: () => void = () => {};
  private client: Client | undefined;
  private stopped = false;
  private retry = 0;
  private timer: NodeJS.Timeout | undefined;

  private constructor(private readonly url: string) {}

  /** Connects and listens; fails when the database cannot be reached now. */
  static async start(url: string): Promise<MailListener> {
    const listener = new MailListener(url);
    await listener.connect();
    return listener;
  }

  get listening(): boolean {
    return this.client !== undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    let opened: Client | undefined;
    const client = await openClient(this.url, 'mailbox database', () => opened && this.lost(opened));
    opened = client;
    client.on('end', () => this.lost(client));
    client.on('notification', (n) => {
      if (n.channel === MAIL_CHANNEL) this.onMail(n.payload || undefined);
      else if (n.channel === AGENTS_CHANNEL) this.onAgents();
    });
    await client.query(`LISTEN ${MAIL_CHANNEL}; LISTEN ${AGENTS_CHANNEL}`);
    if (this.stopped) return void (await client.end().catch(() => {}));
    this.client = client;
    this.retry = 0;
  }

  private lost(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => {});
    this.onAgents();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    const ms = RETRY_MS[Math.min(this.retry++, RETRY_MS.length - 1)];
    this.timer = setTimeout(() => {
      this.connect().then(
        () => {
          // Anything committed while nobody listened was not heard: everyone looks once.
          this.onAgents();
          this.onMail(undefined);
        },
        () => this.schedule(),
      );
    }, ms);
    this.timer.unref();
  }
}
