/**
 * The message catalog: every message kind between processes is declared once,
 * with its argument tuple, its reply type and a check of its arguments.
 */

import type { Role } from "./roles.ts";

/** A declared message; `A` is the argument tuple and `R` the reply (void for one-way). */
export interface MessageDef<A extends unknown[] = unknown[], R = unknown> {
  readonly kind: number;
  readonly name: string;
  /** Returns null when the decoded arguments are acceptable, else why not. */
  readonly check: (args: unknown[]) => string | null;
  /** The roles a peer may have to send it; a channel drops any other sender. */
  readonly from: readonly Role[];
  /** Phantom field carrying the types; never set. */
  readonly types?: { args: A; reply: R };
}

/** Argument tuple of a message definition. */
export type ArgsOf<M> = M extends MessageDef<infer A, unknown> ? A : never;
/** Reply type of a message definition. */
export type ReplyOf<M> = M extends MessageDef<unknown[], infer R> ? R : never;

/** Largest kind a message may have; kinds index a dense table. */
export const MAX_KIND = 1023;

// Filled up front so the engine keeps a dense array rather than a dictionary.
const byKind: (MessageDef | undefined)[] = new Array(MAX_KIND + 1).fill(undefined);

/**
 * Declares a message kind, sent by peers of the roles in `from`. Kinds are
 * unique across the whole catalog, so a frame's kind alone says what it is,
 * whichever role sent it.
 */
export function message<A extends unknown[], R = void>(
  kind: number,
  name: string,
  check: (args: unknown[]) => string | null,
  from: readonly Role[],
): MessageDef<A, R> {
  if (!Number.isInteger(kind) || kind < 1 || kind > MAX_KIND) {
    throw new Error(`message ${name}: kind ${kind} is outside 1..${MAX_KIND}`);
  }
  const taken = byKind[kind];
  if (taken) {
    throw new Error(`message ${name}: kind ${kind} is already ${taken.name}`);
  }
  const def: MessageDef<A, R> = { kind, name, check, from };
  byKind[kind] = def as MessageDef;
  return def;
}

/** The declared message of `kind`, or undefined for a kind nobody declared. */
export function messageByKind(kind: number): MessageDef | undefined {
  return kind >= 0 && kind <= MAX_KIND ? byKind[kind] : undefined;
}
