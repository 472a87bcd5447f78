/**
 * The database a process persists to, behind one interface with two backends: Deno KV (embedded: a file,
 * ":memory:" or a KV Connect URL) and PostgreSQL (shared by baseapps on many hosts). The interface is the subset of
 * Deno KV's API the server uses: point reads, reads of up to 10 keys, ordered listing by key prefix, and atomic
 * commits that check versionstamps, set (optionally expiring), delete and raise counters with `max`. Both backends
 * pass the same contract tests (tests/db/).
 */
export type { Db, DbAtomic, DbCheck, DbCommit, DbEntry, DbKey, DbKeyPart, DbSetOptions } from "./types.ts";
export { DbUnavailableError, isDbUnavailable } from "./types.ts";
export { DenoKvDb, openDenoKv } from "./deno_kv.ts";
// PostgresDb is not re-exported: its driver is loaded only when a --db URL is given (open.ts imports it then).
export { type DbChoice, openDb, type OpenDbOptions, redactUrl } from "./open.ts";
export { type DbRetryOptions, withDbRetry } from "./retry.ts";
