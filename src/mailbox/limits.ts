/**
 * @module
 * Server-side limits (mailbox.md §1 "Limits and bad input"): body size, key length,
 * batch size, wait time, a per-agent send rate (a token bucket, per server process, or shared by every
 * process of a PostgreSQL mailbox)
 * and a per-recipient quota of unread messages and bytes (enforced by the store when
 * it applies a send: store/quota.ts). Every rejection is a tool error that says
 * which limit and what to do.
 */
import { WitnessError } from '../core/errors.js';

export interface MailboxLimits {
  /** Largest message body in UTF-8 bytes. */
  maxBodyBytes: number;
  maxIdempotencyKeyLength: number;
  /** Most messages one check_inbox returns. */
  maxFetch: number;
  /** Longest wait_for_message, in ms. */
  maxWaitMs: number;
  /** Sends per minute per agent (0: unlimited); the bucket holds this many. */
  sendsPerMinute: number;
  /** Unread messages one recipient may have before sends to it are refused (0: unlimited). */
  maxUnreadMessages: number;
  /** Unread bytes (as stored) one recipient may have before sends to it are refused (0: unlimited). */
  maxUnreadBytes: number;
  /** Largest ack_message reply in UTF-8 bytes (it is kept in the signed call log). */
  maxReplyBytes: number;
}

export const DEFAULT_LIMITS: MailboxLimits = {
  maxBodyBytes: 64 * 1024,
  maxIdempotencyKeyLength: 200,
  maxFetch: 100,
  maxWaitMs: 300_000,
  sendsPerMinute: 600,
  // Enough for any working agent team, small enough that a flooded inbox stays
  // readable: 64 MiB is ~1,000 maximum-size bodies, or 10,000 messages of 6 KiB.
  maxUnreadMessages: 10_000,
  maxUnreadBytes: 64 * 1024 * 1024,
  maxReplyBytes: 1024,
};

export function checkBody(body: string, limits: MailboxLimits): void {
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > limits.maxBodyBytes) {
    throw new WitnessError(
      'INVALID_INPUT',
      `The message body is ${bytes} bytes; the limit is ${limits.maxBodyBytes}. Send a shorter body (or a path/URL to the content).`,
    );
  }
}

export function checkReply(reply: string | undefined, limits: MailboxLimits): void {
  if (reply === undefined) return;
  const bytes = Buffer.byteLength(reply, 'utf8');
  if (bytes > limits.maxReplyBytes) {
    throw new WitnessError(
      'INVALID_INPUT',
      `The reply is ${bytes} bytes; the limit is ${limits.maxReplyBytes}. Keep it short (it is kept in the signed call log), or send a message with reply_to instead.`,
    );
  }
}

export function checkIdempotencyKey(key: string | undefined, limits: MailboxLimits): void {
  if (key === undefined) return;
  if (key.length === 0 || key.length > limits.maxIdempotencyKeyLength) {
    throw new WitnessError(
      'INVALID_INPUT',
      `The idempotency_key must be 1–${limits.maxIdempotencyKeyLength} characters; it has ${key.length}. Use a short unique string per logical message.`,
    );
  }
  // A database text value cannot hold U+0000 (PostgreSQL refuses it): refused here, for every store alike.
  // (Lone surrogates in any argument are refused before the tool runs: tools/route.ts.)
  if (key.includes('\0'))
    throw new WitnessError(
      'INVALID_INPUT',
      'The idempotency_key contains a NUL character. Use a short unique string of printable characters per logical message.',
    );
}

/** Longest message id a caller may name; the mailbox's own are 40 characters. */
export const MAX_MESSAGE_ID_LENGTH = 256;

/** A message id named by a caller (`message_id`, `reply_to`, `thread`): one this mailbox could have given. */
export function checkMessageId(id: string | undefined, field: string): void {
  if (id === undefined) return;
  const nul = id.includes('\0');
  if (id.length === 0 || id.length > MAX_MESSAGE_ID_LENGTH || nul) {
    const has = nul ? 'it contains a NUL character' : `it has ${id.length}`;
    throw new WitnessError(
      'INVALID_INPUT',
      `${field} must be a message id from this mailbox (1–${MAX_MESSAGE_ID_LENGTH} characters, no NUL character); ${has}. Use an id from your send_message answers or your inbox.`,
    );
  }
}

/** Takes one send from an agent's allowance, or refuses it (RATE_LIMITED, with retry_after_ms). */
export interface SendRate {
  take(agent: string): void | Promise<void>;
}

/** Per-agent token buckets, in this process (a store shared by hosts keeps them in its database instead). */
export class RateLimiter implements SendRate {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(agent: string): void {
    if (this.perMinute <= 0) return;
    const t = this.now();
    const bucket = this.buckets.get(agent) ?? { tokens: this.perMinute, at: t };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + ((t - bucket.at) * this.perMinute) / 60_000);
    bucket.at = t;
    if (bucket.tokens < 1) {
      this.buckets.set(agent, bucket);
      throw rateLimitError(agent, this.perMinute, bucket.tokens);
    }
    bucket.tokens -= 1;
    this.buckets.set(agent, bucket);
  }
}

/** The refusal of a send when `agent`'s bucket holds `tokens` (< 1) of `perMinute`. */
export function rateLimitError(agent: string, perMinute: number, tokens: number): WitnessError {
  const waitMs = Math.ceil(((1 - tokens) * 60_000) / perMinute);
  return new WitnessError(
    'RATE_LIMITED',
    `Rate limit: ${agent} may send ${perMinute} messages per minute. Try again in ${waitMs} ms.`,
    { data: { retry_after_ms: waitMs } },
  );
}
