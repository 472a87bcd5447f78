/**
 * Accounts in the database (core/db): `["account", name]` holds a salted PBKDF2-SHA256 hash
 * of the password, the id and type of the account's entity. An account is
 * created on its first login unless configuration forbids it; a custom check
 * can refuse a login before the password is looked at. Every attempt passes
 * the login guard (rate limits and back-off per address and per account)
 * before it costs a KV read, and every hash goes through one bounded queue.
 */

import { type Db, isDbUnavailable } from "../../core/db/mod.ts";
import { holdId, withKvRetry } from "../persist/mod.ts";
import { HashQueue, QueueFullError } from "./hash_queue.ts";
import {
  DEFAULT_LOGIN_LIMITS,
  LoginGuard,
  type LoginLimits,
  type LoginOutcome,
  type LoginTicket,
} from "./login_guard.ts";

export type { LoginLimits } from "./login_guard.ts";

/** What Deno KV holds per account. */
export interface AccountRecord {
  salt: Uint8Array;
  hash: Uint8Array;
  iterations: number;
  entityId: number;
  type: string;
  createdAt: number;
}

/** A login attempt as the custom check sees it. */
export interface LoginAttempt {
  name: string;
  password: string;
  /** The client's address, HOST:PORT. */
  remote: string;
}

/** A custom check: return a reason to refuse the login, or null to go on with the password check. */
export type LoginCheck = (attempt: LoginAttempt) => string | null | Promise<string | null>;

/** How accounts are checked and created. */
export interface AccountOptions {
  /** Create an account on its first login (default true). */
  autoCreate?: boolean;
  check?: LoginCheck | null;
  /** PBKDF2 iterations for new hashes (default 100,000). */
  iterations?: number;
  /** The entity type of a new account's entity. */
  entityType: string;
  /** A fresh entity id for a new account. */
  newEntityId: () => Promise<number>;
  /** Rate limits, back-off and the hash queue; unset fields take DEFAULT_LOGIN_LIMITS. */
  limits?: Partial<LoginLimits>;
  /** The guard's monotonic clock in ms (tests inject one). */
  now?: () => number;
}

/** The outcome of a login: the account's entity, or why not. */
export type LoginResult =
  | { ok: true; entityId: number; type: string; created: boolean }
  | { ok: false; reason: string; retryAfterMs?: number };

/** Why a login is refused while the account database cannot be reached. */
export const UNAVAILABLE = "the account database is unreachable; try again in a moment";

const NAME_RE = /^[\p{L}\p{N}_.\-@]{1,64}$/u;
const MAX_PASSWORD = 256;
const encoder = new TextEncoder();

/** PBKDF2-SHA256 of `password` with `salt`, 32 bytes. */
export async function hashPassword(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt: salt as BufferSource, iterations },
    key,
    256,
  );
  return new Uint8Array(bits);
}

/** Compares two byte strings in time that depends only on their length. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/** Checks account names and passwords against Deno KV and creates accounts. */
export class Accounts {
  /** Rate limits and back-off, consulted before anything else. */
  readonly guard: LoginGuard;
  /** Every password hash of a login runs through this queue. */
  readonly hashes: HashQueue;
  readonly #kv: Db;
  readonly #o: Required<Omit<AccountOptions, "limits" | "now">>;

  constructor(kv: Db, opts: AccountOptions) {
    this.#kv = kv;
    const { limits, now, ...rest } = opts;
    this.#o = { autoCreate: true, check: null, iterations: 100_000, ...rest };
    const l = { ...DEFAULT_LOGIN_LIMITS, ...limits };
    this.guard = new LoginGuard(l, now);
    this.hashes = new HashQueue({ concurrency: l.hashConcurrency, maxWaiting: l.hashQueueMax });
  }

  /** The stored record of an account, or null. */
  async get(name: string): Promise<AccountRecord | null> {
    return (await withKvRetry(() => this.#kv.get<AccountRecord>(["account", name]))).value;
  }

  /** Checks a login; creates the account on first login when allowed. */
  async login(attempt: LoginAttempt): Promise<LoginResult> {
    const { name, password } = attempt;
    if (!NAME_RE.test(name)) {
      return { ok: false, reason: "account names are 1-64 letters, digits or _ . - @" };
    }
    if (password.length === 0 || encoder.encode(password).length > MAX_PASSWORD) {
      return { ok: false, reason: `passwords are 1-${MAX_PASSWORD} bytes` };
    }
    const admitted = this.guard.admit(attempt.remote, name);
    if (!admitted.ok) return { ok: false, reason: admitted.reason, retryAfterMs: admitted.retryAfterMs };
    const ticket = admitted.ticket;
    let outcome: LoginOutcome = "other";
    try {
      const [result, how] = await this.#check(attempt, ticket);
      outcome = how;
      return result;
    } catch (e) {
      if (!isDbUnavailable(e)) throw e;
      // Refused, not waited for: the client can try again, and no login holds a hash slot through an outage.
      return { ok: false, reason: UNAVAILABLE };
    } finally {
      this.guard.settle(ticket, outcome);
    }
  }

  async #check(attempt: LoginAttempt, ticket: LoginTicket): Promise<[LoginResult, LoginOutcome]> {
    const { name, password } = attempt;
    if (this.#o.check) {
      const refused = await this.#o.check(attempt);
      if (refused !== null) return [{ ok: false, reason: refused }, "other"];
    }
    const claim = { key: ticket.address, suspect: ticket.suspect };
    const hash = (salt: Uint8Array, iterations: number) =>
      this.hashes.run(claim, () => hashPassword(password, salt, iterations));
    const key = ["account", name];
    try {
      for (let tries = 0; tries < 5; tries++) {
        const got = await withKvRetry(() => this.#kv.get<AccountRecord>(key));
        if (got.value) {
          const a = got.value;
          if (!constantTimeEqual(await hash(a.salt, a.iterations), a.hash)) {
            return [{ ok: false, reason: "wrong password" }, "wrong-password"];
          }
          return [{ ok: true, entityId: a.entityId, type: a.type, created: false }, "ok"];
        }
        if (!this.#o.autoCreate) {
          return [{ ok: false, reason: `no account "${name}" (accounts are not created on login)` }, "no-account"];
        }
        const salt = crypto.getRandomValues(new Uint8Array(16));
        const record: AccountRecord = {
          salt,
          hash: await hash(salt, this.#o.iterations),
          iterations: this.#o.iterations,
          entityId: await this.#o.newEntityId(),
          type: this.#o.entityType,
          createdAt: Date.now(),
        };
        // Two first logins at once: only one creates, the other checks against it.
        const res = await withKvRetry(() =>
          holdId(this.#kv.atomic().check({ key, versionstamp: null }).set(key, record), record.entityId).commit()
        );
        if (res.ok) return [{ ok: true, entityId: record.entityId, type: record.type, created: true }, "ok"];
      }
    } catch (e) {
      if (e instanceof QueueFullError) return [{ ok: false, reason: e.message }, "other"];
      throw e;
    }
    return [{ ok: false, reason: "the account is being changed concurrently; try again" }, "other"];
  }
}
