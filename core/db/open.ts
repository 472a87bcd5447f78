/** Opens the configured database: PostgreSQL for --db, else Deno KV for --kv; waits for a PostgreSQL that is down. */
import { errorText } from "../errors.ts";
import type { Logger } from "../log.ts";
import { openDenoKv } from "./deno_kv.ts";
import { type Db, DbUnavailableError } from "./types.ts";

/** Which database: `db` (a postgres:// URL) when set, else Deno KV at `kv`. */
export interface DbChoice {
  kv: string;
  db: string | null;
}

/** How openDb waits for a database that cannot be reached. */
export interface OpenDbOptions {
  /** Told one line per failed attempt. */
  log?: Pick<Logger, "warn" | "info">;
  /** First wait between attempts, ms (doubling up to maxDelayMs). */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Stops waiting (the returned promise rejects). */
  signal?: AbortSignal;
  /** PostgreSQL: how long a step waits for an answer before it counts as unreachable (default 15 s). */
  answerTimeoutMs?: number;
}

/** `url` without its password, for log lines. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "";
    return u.toString().replace(/:@/, "@");
  } catch {
    return "(a malformed URL)";
  }
}

/**
 * Opens the database of `choice`. A PostgreSQL server that cannot be reached (not started yet, restarting, a
 * wrong address) is tried again with back-off, one log line per attempt naming the URL (without its password) and the
 * reason, until it answers: processes may start in any order.
 */
export async function openDb(choice: DbChoice, opts: OpenDbOptions = {}): Promise<Db> {
  if (choice.db === null) return await openDenoKv(choice.kv);
  const where = `PostgreSQL at ${redactUrl(choice.db)}`;
  // Loaded only for a PostgreSQL URL: the driver stays out of the processes that use Deno KV (docs/benchmarks.md#memory).
  const { PostgresDb } = await import("./postgres.ts");
  let delay = opts.firstDelayMs ?? 500;
  for (let attempt = 1;; attempt++) {
    opts.signal?.throwIfAborted();
    try {
      const db = await PostgresDb.open(choice.db, where, opts.answerTimeoutMs);
      if (attempt > 1) opts.log?.info(`${where} answered after ${attempt} attempts`);
      return db;
    } catch (e) {
      const why = e instanceof DbUnavailableError
        ? (e.cause === undefined ? e.message : errorText(e.cause))
        : errorText(e);
      opts.log?.warn(`${where} cannot be used (attempt ${attempt}: ${why}); trying again in ${delay / 1000} s`);
    }
    await new Promise<void>((res, rej) => {
      const t = setTimeout(res, delay);
      opts.signal?.addEventListener("abort", () => {
        clearTimeout(t);
        rej(opts.signal!.reason);
      }, { once: true });
    });
    delay = Math.min(opts.maxDelayMs ?? 5000, delay * 2);
  }
}
