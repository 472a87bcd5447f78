/**
 * Retrying database operations: a local Deno KV file shared by several processes says "database is locked" instead of
 * waiting, and a PostgreSQL server may be away for a while (a restart, a fail-over).
 */
import { errorText } from "../errors.ts";
import { DbUnavailableError } from "./types.ts";

/** How withDbRetry retries. */
export interface DbRetryOptions {
  /** Tries while the database is locked or busy (default 12). */
  attempts?: number;
  /**
   * Wait (with back-off, up to a second between tries) while the database is unreachable, as long as it takes: what
   * must not be lost (a save) waits; what a user waits for (a login) leaves this off and fails at once.
   */
  waitWhileUnavailable?: boolean;
  /** Told each time an unreachable database is waited for. */
  onUnavailable?: (e: DbUnavailableError) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `op`, retrying with back-off while the database is locked or busy, and while unreachable if asked to. */
export async function withDbRetry<T>(op: () => Promise<T>, opts: DbRetryOptions = {}): Promise<T> {
  const attempts = opts.attempts ?? 12;
  let busyTries = 0, downTries = 0;
  for (;;) {
    try {
      return await op();
    } catch (e) {
      if (e instanceof DbUnavailableError && opts.waitWhileUnavailable) {
        opts.onUnavailable?.(e);
        downTries++;
        await sleep(Math.min(1000, 50 * 2 ** downTries) * (0.5 + Math.random() / 2));
        continue;
      }
      const busy = /database is (locked|busy)/i.test(errorText(e) ?? "");
      if (!busy || ++busyTries >= attempts) throw e;
      await sleep(Math.min(500, 10 * 2 ** busyTries) * (0.5 + Math.random()));
    }
  }
}
