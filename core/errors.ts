/** Text of thrown values: a `catch` gets an `unknown`, which need not be an Error. */

/** How `errorText` renders an Error. */
export interface ErrorTextOptions {
  /** Give the Error's stack (which begins with its name and message) instead of its message. */
  readonly stack?: boolean;
}

/**
 * The text of a thrown value: an Error's message (or its stack with `stack: true`),
 * `String(v)` for anything else. Never throws, even for a value that has no string form.
 */
export function errorText(e: unknown, opts: ErrorTextOptions = {}): string {
  if (e instanceof Error) return opts.stack ? (e.stack ?? e.message) : e.message;
  try {
    return String(e);
  } catch {
    return Object.prototype.toString.call(e);
  }
}
