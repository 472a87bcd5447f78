/**
 * Resume tokens: what lets a client whose connection was lost (its baseapp
 * died, the network dropped) take its player back without its password. A
 * token names the entity, its type and account, expires soon, and is signed
 * with HMAC-SHA256 (Web Crypto) under a key derived from the cluster secret,
 * or, without one, a random key kept in the baseapp's database (so a baseapp
 * restarted on the same database still accepts the tokens it gave). Each
 * token is single-use: its nonce is recorded in KV, in one atomic commit
 * that fails for a nonce seen before, so a replayed token is refused.
 *
 * Form: base64url(JSON payload) "." base64url(HMAC of the payload part).
 *
 * Resuming on another baseapp (its own died; base_backup.ts) needs the cluster `--secret`: without one each
 * database has its own key, and another baseapp's tokens do not verify.
 */
import { type Db, type DbKey, isDbUnavailable } from "../../core/db/mod.ts";
import { withKvRetry } from "../persist/mod.ts";

/** Whose token it is. */
export interface ResumeClaim {
  entityId: number;
  /** The entity type's name. */
  type: string;
  account: string;
}

interface Payload {
  e: number;
  t: string;
  a: string;
  /** Expiry, ms since the epoch. */
  x: number;
  /** 128 random bits, hex: what makes the token single-use. */
  n: string;
}

/**
 * A baseapp's say on a signed, unexpired token before it is used up: null to take it, else why not. `nonce` is what
 * makes the token single-use (tokenNonce).
 */
export type ResumeCheck = (claim: ResumeClaim, nonce: string) => string | null | Promise<string | null>;

/** The nonce of `token` (what makes it single-use), or null when it is malformed; the signature is not checked. */
export function tokenNonce(token: string): string | null {
  try {
    const n = JSON.parse(new TextDecoder().decode(fromB64url(token.split(".")[0]))).n;
    return typeof n === "string" ? n : null;
  } catch {
    return null;
  }
}

/** How long a token is good for unless configured; a new one is sent before it runs out. */
export const TOKEN_TTL_MS = 10 * 60_000;

const KEY_OF_SECRET: DbKey = ["resume", "secret"];
const enc = new TextEncoder();

function b64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromB64url(s: string): Uint8Array<ArrayBuffer> {
  const bin = atob(s.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Issues and checks the resume tokens of one baseapp. */
export class ResumeTokens {
  private constructor(private readonly kv: Db, private readonly key: CryptoKey, readonly ttlMs: number) {}

  /**
   * The token service of a baseapp: keyed by the cluster `secret` when there is one (every baseapp of the
   * cluster accepts the tokens of the others), else by a random secret kept in `kv`.
   */
  static async open(kv: Db, secret: string | null, ttlMs = TOKEN_TTL_MS): Promise<ResumeTokens> {
    let raw: Uint8Array<ArrayBuffer>;
    if (secret !== null) {
      raw = enc.encode(`seamless resume tokens\0${secret}`);
    } else {
      const fresh = crypto.getRandomValues(new Uint8Array(32));
      // The first baseapp on this database makes the secret; later ones (and restarts) read it.
      const wait = { waitWhileUnavailable: true };
      await withKvRetry(
        () => kv.atomic().check({ key: KEY_OF_SECRET, versionstamp: null }).set(KEY_OF_SECRET, fresh).commit(),
        wait,
      );
      const got = (await withKvRetry(() => kv.get<Uint8Array>(KEY_OF_SECRET), wait)).value;
      if (!got) throw new Error(`the resume token secret at ${JSON.stringify(KEY_OF_SECRET)} could not be stored`);
      raw = new Uint8Array(got);
    }
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", raw));
    const key = await crypto.subtle.importKey("raw", digest, { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]);
    return new ResumeTokens(kv, key, ttlMs);
  }

  /** A new token for `claim`, good for the token lifetime from now. */
  async issue(claim: ResumeClaim): Promise<string> {
    const payload: Payload = {
      e: claim.entityId,
      t: claim.type,
      a: claim.account,
      x: Date.now() + this.ttlMs,
      n: hex(crypto.getRandomValues(new Uint8Array(16))),
    };
    const body = b64url(enc.encode(JSON.stringify(payload)));
    const sig = new Uint8Array(await crypto.subtle.sign("HMAC", this.key, enc.encode(body)));
    return `${body}.${b64url(sig)}`;
  }

  /**
   * Checks `token` and uses it up: the claim it carries, or the reason it is refused (malformed, forged,
   * expired, or used before).
   */
  async redeem(
    token: string,
    accept: ResumeCheck | null = null,
  ): Promise<{ ok: true; claim: ResumeClaim } | { ok: false; reason: string }> {
    const [body, sig, extra] = token.split(".");
    if (!body || !sig || extra !== undefined) return { ok: false, reason: "resume token malformed" };
    let payload: Payload;
    try {
      const good = await crypto.subtle.verify("HMAC", this.key, fromB64url(sig), enc.encode(body));
      if (!good) return { ok: false, reason: "resume token not signed by this cluster" };
      payload = JSON.parse(new TextDecoder().decode(fromB64url(body)));
    } catch {
      return { ok: false, reason: "resume token malformed" };
    }
    const { e, t, a, x, n } = payload;
    if (
      !Number.isSafeInteger(e) || typeof t !== "string" || typeof a !== "string" || typeof x !== "number" ||
      typeof n !== "string"
    ) {
      return { ok: false, reason: "resume token malformed" };
    }
    const left = x - Date.now();
    if (left <= 0) return { ok: false, reason: "resume token expired; log in again" };
    const claim = { entityId: e, type: t, account: a };
    // Checked before the token is used up: a token refused here for now (say, its base is being restored) stays good.
    const refused = accept ? await accept(claim, n) : null;
    if (refused !== null) return { ok: false, reason: refused };
    const used: DbKey = ["resume", "used", n];
    let res;
    try {
      res = await withKvRetry(() =>
        this.kv.atomic().check({ key: used, versionstamp: null }).set(used, e, { expireIn: left + 60_000 }).commit()
      );
    } catch (err) {
      if (!isDbUnavailable(err)) throw err;
      return { ok: false, reason: "the database is unreachable; the resume token stays good: try again in a moment" };
    }
    if (!res.ok) return { ok: false, reason: "resume token already used; log in again" };
    return { ok: true, claim };
  }
}
