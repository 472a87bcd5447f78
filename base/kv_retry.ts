/**
 * Retries a Deno KV operation that failed because another process held the
 * database (a local SQLite file shared by the cellappmgr and the baseapps
 * reports "database is locked" instead of waiting).
 */

/** Runs `op`, retrying with backoff while KV says the database is locked or busy. */
export async function withKvRetry<T>(op: () => Promise<T>, attempts = 12): Promise<T> {
  for (let i = 1;; i++) {
    try {
      return await op();
    } catch (e) {
      const busy = /database is (locked|busy)/i.test((e as Error).message ?? "");
      if (!busy || i >= attempts) throw e;
      await new Promise((r) => setTimeout(r, Math.min(500, 10 * 2 ** i) * (0.5 + Math.random())));
    }
  }
}
