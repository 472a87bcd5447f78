/**
 * Retrying database operations on a baseapp (core/db/retry.ts): locked or busy Deno KV files always, an unreachable
 * database only where asked (saves wait for it; logins fail at once with a reason).
 */
export { type DbRetryOptions, withDbRetry as withKvRetry } from "../../core/db/retry.ts";
