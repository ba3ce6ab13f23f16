/**
 * @module
 * The one shape of a verifier's problem: a code, what was wrong, and where. Every
 * verifier of Witness — receipts and paths, mailboxes, signed results, recorded
 * streams, E12 files, delegation records — reports its problems in this shape, so a
 * caller (the CLI's `witness verify --json`, the viewer, a program) handles one shape
 * whatever it checked. A verifier may add fields of its own (a mailbox problem's file
 * and line, a receipt's index on its path) as an extension of it.
 */

/** One problem a verifier found. */
export interface Problem<C extends string = string> {
  /** A code of the one vocabulary of reason codes (attest/reasons.ts), or of the verifier's own documented list. */
  code: C;
  /** What exactly was wrong, in words a user can act on. */
  message: string;
  /** Where, when the problem has a place: "receipt 2", "calls.jsonl:5", "line 5", "chunk 3"; absent for the whole artifact. */
  at?: string;
}

/** The problem without a verifier's extension fields: exactly `code`, `message` and, when located, `at`. */
export function pickProblem<C extends string>(p: Problem<C>): Problem<C> {
  return p.at === undefined ? { code: p.code, message: p.message } : { code: p.code, message: p.message, at: p.at };
}

/** `p` placed within `where` (an artifact, a stream): its own place, when it has one, follows ("artifact 0 (a1), receipt 1"). */
export function problemWithin<C extends string>(where: string, p: Problem<C>): Problem<C> {
  return { code: p.code, message: p.message, at: p.at === undefined ? where : `${where}, ${p.at}` };
}
