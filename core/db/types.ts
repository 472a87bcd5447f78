/** The database interface both backends implement (see mod.ts). */

/** One part of a key; keys order part by part, parts of different types as Uint8Array < string < bigint < number < boolean. */
export type DbKeyPart = Uint8Array | string | number | bigint | boolean;
/** A key: a tuple of parts. */
export type DbKey = readonly DbKeyPart[];

/** A key's value and versionstamp, or nulls when it holds nothing. A counter raised by `max` reads as a bigint. */
export interface DbEntry<T> {
  readonly key: DbKey;
  readonly value: T | null;
  readonly versionstamp: string | null;
}

/** "The key still has this versionstamp" (null: holds nothing). An entry read before passes as its own check. */
export interface DbCheck {
  readonly key: DbKey;
  readonly versionstamp: string | null;
}

/** The outcome of a commit: its versionstamp, or not committed because a check failed. */
export type DbCommit = { ok: true; versionstamp: string } | { ok: false };

/** Options of a write. */
export interface DbSetOptions {
  /**
   * Milliseconds after which the entry is deleted. PostgreSQL reads it as absent from then on; Deno KV deletes it
   * some time later (within about a minute), so nothing may rely on the moment it goes.
   */
  expireIn?: number;
}

/** An atomic operation: its checks hold and all its mutations apply, or nothing does. */
export interface DbAtomic {
  check(...checks: DbCheck[]): DbAtomic;
  set(key: DbKey, value: unknown, options?: DbSetOptions): DbAtomic;
  delete(key: DbKey): DbAtomic;
  /** Raises the counter at `key` to `n` (a missing counter becomes `n`). */
  max(key: DbKey, n: bigint): DbAtomic;
  commit(): Promise<DbCommit>;
}

/** A database. Values are structured data: objects, arrays, strings, numbers, booleans, null and Uint8Array. */
export interface Db extends AsyncDisposable {
  /** Which backend, and where (a URL without its password): for log lines and errors. */
  readonly description: string;
  get<T = unknown>(key: DbKey): Promise<DbEntry<T>>;
  /** At most 10 keys (Deno KV's limit), answered in order. */
  getMany<T extends readonly unknown[]>(keys: readonly DbKey[]): Promise<{ [K in keyof T]: DbEntry<T[K]> }>;
  set(key: DbKey, value: unknown, options?: DbSetOptions): Promise<DbCommit>;
  delete(key: DbKey): Promise<void>;
  /** The entries under `prefix` (not the prefix itself), in key order. */
  list<T = unknown>(prefix: DbKey): AsyncIterableIterator<DbEntry<T>>;
  atomic(): DbAtomic;
  close(): Promise<void>;
  /** close(), for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The database could not be reached (connection refused or lost, server shutting down): the operation may be tried
 * again once it is back. A commit that failed so may or may not have been applied.
 */
export class DbUnavailableError extends Error {
  override name = "DbUnavailableError";
}

/** Whether `e` says the database is unreachable (as opposed to a bad request or a bug). */
export function isDbUnavailable(e: unknown): e is DbUnavailableError {
  return e instanceof DbUnavailableError;
}
