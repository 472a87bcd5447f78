/**
 * Accounts in Deno KV: `["account", name]` holds a salted PBKDF2-SHA256 hash
 * of the password, the id and type of the account's entity. An account is
 * created on its first login unless configuration forbids it; a custom check
 * can refuse a login before the password is looked at.
 */

import { withKvRetry } from "./kv_retry.ts";

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
}

/** The outcome of a login: the account's entity, or why not. */
export type LoginResult =
  | { ok: true; entityId: number; type: string; created: boolean }
  | { ok: false; reason: string };

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
  readonly #kv: Deno.Kv;
  readonly #o: Required<AccountOptions>;

  constructor(kv: Deno.Kv, opts: AccountOptions) {
    this.#kv = kv;
    this.#o = { autoCreate: true, check: null, iterations: 100_000, ...opts };
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
    if (this.#o.check) {
      const refused = await this.#o.check(attempt);
      if (refused !== null) return { ok: false, reason: refused };
    }
    const key = ["account", name];
    for (let attempt = 0; attempt < 5; attempt++) {
      const got = await withKvRetry(() => this.#kv.get<AccountRecord>(key));
      if (got.value) {
        const a = got.value;
        const hash = await hashPassword(password, a.salt, a.iterations);
        if (!constantTimeEqual(hash, a.hash)) return { ok: false, reason: "wrong password" };
        return { ok: true, entityId: a.entityId, type: a.type, created: false };
      }
      if (!this.#o.autoCreate) return { ok: false, reason: `no account "${name}" (accounts are not created on login)` };
      const salt = crypto.getRandomValues(new Uint8Array(16));
      const record: AccountRecord = {
        salt,
        hash: await hashPassword(password, salt, this.#o.iterations),
        iterations: this.#o.iterations,
        entityId: await this.#o.newEntityId(),
        type: this.#o.entityType,
        createdAt: Date.now(),
      };
      // Two first logins at once: only one creates, the other checks against it.
      const res = await withKvRetry(() =>
        this.#kv.atomic().check({ key, versionstamp: null }).set(key, record).commit()
      );
      if (res.ok) return { ok: true, entityId: record.entityId, type: record.type, created: true };
    }
    return { ok: false, reason: "the account is being changed concurrently; try again" };
  }
}
