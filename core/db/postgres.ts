/**
 * The PostgreSQL backend: one table of key, value, versionstamp and expiry, which baseapps on many hosts share.
 *
 * - Keys are stored in an order-preserving byte encoding (key_codec.ts), so listing a prefix is a range scan.
 * - Values are msgpack (bigints as 64-bit integers: the counters `max` raises).
 * - A versionstamp is a number from a sequence, taken once per commit, printed as 20 hex digits like Deno KV's.
 * - An expired entry reads as absent (by the server's clock); expired rows are swept now and then.
 * - An atomic commit is one transaction: it takes an advisory lock per key it checks or writes (in one order, so two
 *   commits cannot deadlock), compares the checked versionstamps, and writes only if they all hold. Every write goes
 *   through such a commit, so a checked key cannot change between the comparison and the writes.
 */
import { errorText } from "../errors.ts";
import postgres from "postgres";
import { Decoder, Encoder } from "@msgpack/msgpack";
import { decodeKey, encodeKey, lockOf, prefixEnd } from "./key_codec.ts";
import {
  type Db,
  type DbAtomic,
  type DbCheck,
  type DbCommit,
  type DbEntry,
  type DbKey,
  type DbSetOptions,
  DbUnavailableError,
} from "./types.ts";

const TABLE = "seamless_kv";
const SEQUENCE = "seamless_kv_versionstamp";
/** The advisory lock that makes concurrent schema creation by several processes safe. */
const SCHEMA_LOCK = 0x5ea1e55n;
/** Rows read per round trip of a list. */
const LIST_BATCH = 500;
const SWEEP_MS = 5 * 60_000;
/**
 * How long a step may wait for the server's answer before it counts as unreachable. A server whose link is cut (no
 * reset, packets dropped) leaves a query waiting for TCP to give up, many minutes: a login is refused long before.
 */
export const ANSWER_TIMEOUT_MS = 15_000;
const U64_MAX = 2n ** 64n - 1n;

const encoder = new Encoder({ useBigInt64: true });
const decoder = new Decoder({ useBigInt64: true });

type Sql = postgres.Sql;

/** Node-style and postgres.js codes of a connection that failed or was lost. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);

/**
 * Whether a postgres.js error means the server is out of reach: a connection error, SQLSTATE class 08 (connection
 * exception), 57P01-57P03 (shut down, crashed, starting up) or 53300 (too many connections).
 */
function isConnectionError(e: unknown): boolean {
  const code = String((e as { code?: unknown })?.code ?? "");
  if (CONNECTION_CODES.has(code) || /^08/.test(code) || /^57P0[123]$/.test(code) || code === "53300") return true;
  return /connection (refused|reset|closed|terminated)|broken pipe/i.test(errorText(e));
}

function versionstampOf(n: bigint | string): string {
  return BigInt(n).toString(16).padStart(20, "0");
}

function hexOf(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

type Mutation =
  | { type: "set"; key: DbKey; value: unknown; expireIn?: number }
  | { type: "delete"; key: DbKey }
  | { type: "max"; key: DbKey; n: bigint };

class PgAtomic implements DbAtomic {
  readonly #checks: DbCheck[] = [];
  readonly #mutations: Mutation[] = [];

  constructor(private readonly db: PostgresDb) {}

  check(...checks: DbCheck[]): DbAtomic {
    for (const c of checks) this.#checks.push({ key: c.key, versionstamp: c.versionstamp });
    return this;
  }

  set(key: DbKey, value: unknown, options?: DbSetOptions): DbAtomic {
    this.#mutations.push({ type: "set", key, value, expireIn: options?.expireIn });
    return this;
  }

  delete(key: DbKey): DbAtomic {
    this.#mutations.push({ type: "delete", key });
    return this;
  }

  max(key: DbKey, n: bigint): DbAtomic {
    if (n < 0n || n > U64_MAX) throw new RangeError(`max(${JSON.stringify(key)}): ${n} is not a 64-bit unsigned value`);
    this.#mutations.push({ type: "max", key, n });
    return this;
  }

  commit(): Promise<DbCommit> {
    return this.db.commitAtomic(this.#checks, this.#mutations);
  }
}

/** A PostgreSQL database behind the Db interface. */
export class PostgresDb implements Db {
  readonly #sql: Sql;
  readonly #sweep: number;
  readonly #answerMs: number;

  private constructor(sql: Sql, readonly description: string, answerMs: number) {
    this.#sql = sql;
    this.#answerMs = answerMs;
    this.#sweep = setInterval(() => void this.#sweepExpired(), SWEEP_MS) as unknown as number;
    Deno.unrefTimer(this.#sweep);
  }

  /**
   * Connects to `url` and makes the table and sequence when missing. Throws DbUnavailableError when the server cannot
   * be reached (openDb waits and tries again), another Error for anything else.
   */
  static async open(url: string, description: string, answerTimeoutMs = ANSWER_TIMEOUT_MS): Promise<PostgresDb> {
    const sql = postgres(url, {
      max: 4,
      connect_timeout: 5,
      // Reconnects at most a second apart (postgres.js's own back-off grows to 20 s): a database back after an
      // outage is used again within about a second, and the saves waiting for it land.
      backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
      idle_timeout: 60,
      onnotice: () => {},
      connection: { application_name: "seamless" },
    });
    const db = new PostgresDb(sql, description, answerTimeoutMs);
    try {
      await db.#run("creating its table", () =>
        sql.begin(async (tx) => {
          await tx`select pg_advisory_xact_lock(${String(SCHEMA_LOCK)}::int8)`;
          await tx.unsafe(
            `create table if not exists ${TABLE} (key bytea primary key, value bytea not null, ` +
              `versionstamp int8 not null, expires_at timestamptz)`,
          );
          await tx.unsafe(`create sequence if not exists ${SEQUENCE}`);
        }));
      await db.#sweepExpired();
    } catch (e) {
      await db.close();
      throw e;
    }
    return db;
  }

  /**
   * Runs one database step; errors name the database and what was being done, and keep their cause. A step without
   * an answer in time is unreachable too (it may still complete later, as a step whose connection broke may have).
   */
  async #run<T>(what: string, step: () => Promise<T>): Promise<T> {
    const running = step();
    running.catch(() => {}); // its failure after a timeout is no one's to handle
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await Promise.race([
        running,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            reject(new DbUnavailableError(`${this.description} is unreachable: no answer within ${this.#answerMs} ms`));
          }, this.#answerMs);
        }),
      ]);
    } catch (e) {
      if (e instanceof DbUnavailableError) throw e;
      const msg = errorText(e);
      if (isConnectionError(e)) {
        throw new DbUnavailableError(`${this.description} is unreachable: ${msg}`, { cause: e });
      }
      throw new Error(`${this.description}: ${what} failed: ${msg}`, { cause: e });
    } finally {
      clearTimeout(timer);
    }
  }

  async #sweepExpired(): Promise<void> {
    try {
      await this.#sql`delete from ${this.#sql(TABLE)} where expires_at < clock_timestamp()`;
    } catch {
      // Expired rows read as absent anyway; the next sweep takes them.
    }
  }

  #entry<T>(key: DbKey, row: { value: Uint8Array; versionstamp: string } | undefined): DbEntry<T> {
    if (!row) return { key, value: null, versionstamp: null };
    // Decoded from a plain copy: byte strings in the value then come out as Uint8Array, not as views of a Node Buffer.
    return {
      key,
      value: decoder.decode(new Uint8Array(row.value)) as T,
      versionstamp: versionstampOf(row.versionstamp),
    };
  }

  get<T = unknown>(key: DbKey): Promise<DbEntry<T>> {
    const k = encodeKey(key);
    return this.#run(`reading ${JSON.stringify(key, keyJson)}`, async () => {
      const rows = await this.#sql<{ value: Uint8Array; versionstamp: string }[]>`
        select value, versionstamp from ${this.#sql(TABLE)}
        where key = ${k} and (expires_at is null or expires_at > clock_timestamp())`;
      return this.#entry<T>(key, rows[0]);
    });
  }

  getMany<T extends readonly unknown[]>(keys: readonly DbKey[]): Promise<{ [K in keyof T]: DbEntry<T[K]> }> {
    if (keys.length > 10) throw new RangeError(`getMany: ${keys.length} keys; at most 10 are read at once`);
    const encoded = keys.map(encodeKey);
    return this.#run(`reading ${keys.length} keys`, async () => {
      const rows = await this.#sql<{ key: Uint8Array; value: Uint8Array; versionstamp: string }[]>`
        select key, value, versionstamp from ${this.#sql(TABLE)}
        where key = any(${this.#sql.array(encoded as unknown as string[], 17)}::bytea[])
          and (expires_at is null or expires_at > clock_timestamp())`;
      const byKey = new Map(rows.map((r) => [hexOf(r.key), r]));
      return keys.map((k, i) => this.#entry(k, byKey.get(hexOf(encoded[i])))) as { [K in keyof T]: DbEntry<T[K]> };
    });
  }

  set(key: DbKey, value: unknown, options?: DbSetOptions): Promise<DbCommit> {
    return this.atomic().set(key, value, options).commit();
  }

  async delete(key: DbKey): Promise<void> {
    await this.atomic().delete(key).commit();
  }

  async *list<T = unknown>(prefix: DbKey): AsyncIterableIterator<DbEntry<T>> {
    const start = encodeKey(prefix);
    const end = prefixEnd(start);
    let after = start;
    for (;;) {
      const rows = await this.#run(
        `listing ${JSON.stringify(prefix, keyJson)}`,
        () =>
          this.#sql<{ key: Uint8Array; value: Uint8Array; versionstamp: string }[]>`
          select key, value, versionstamp from ${this.#sql(TABLE)}
          where key > ${after} and key < ${end} and (expires_at is null or expires_at > clock_timestamp())
          order by key limit ${LIST_BATCH}`,
      );
      for (const r of rows) yield this.#entry<T>(decodeKey(r.key), r);
      if (rows.length < LIST_BATCH) return;
      after = rows[rows.length - 1].key;
    }
  }

  atomic(): DbAtomic {
    return new PgAtomic(this);
  }

  /** Commits checks and mutations in one transaction (PgAtomic.commit). */
  commitAtomic(checks: readonly DbCheck[], mutations: readonly Mutation[]): Promise<DbCommit> {
    // Encoded (and values serialised) before the transaction: a value that cannot be stored fails here, alone.
    const checked = checks.map((c) => ({ k: encodeKey(c.key), versionstamp: c.versionstamp }));
    const muts = mutations.map((m) => ({ ...m, k: encodeKey(m.key) }));
    const locks = [...new Set([...checked, ...muts].map((x) => lockOf(x.k)))].sort((a, b) =>
      a < b ? -1 : a > b ? 1 : 0
    );
    const sql = this.#sql;
    return this.#run(`committing ${mutations.length} writes`, () =>
      sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(l) from unnest(${
          sql.array(locks.map(String), 20)
        }::int8[]) with ordinality as t(l, i) order by i`;
        if (checked.length > 0) {
          const rows = await tx<{ key: Uint8Array; versionstamp: string }[]>`
            select key, versionstamp from ${sql(TABLE)}
            where key = any(${sql.array(checked.map((c) => c.k) as unknown as string[], 17)}::bytea[])
              and (expires_at is null or expires_at > clock_timestamp())`;
          const now = new Map(rows.map((r) => [hexOf(r.key), versionstampOf(r.versionstamp)]));
          if (checked.some((c) => (now.get(hexOf(c.k)) ?? null) !== c.versionstamp)) return { ok: false } as DbCommit;
        }
        // The counters raised, as they stand before this commit.
        const maxKeys = muts.filter((m) => m.type === "max").map((m) => m.k);
        const counters = new Map<string, unknown>();
        if (maxKeys.length > 0) {
          const rows = await tx<{ key: Uint8Array; value: Uint8Array }[]>`
            select key, value from ${sql(TABLE)}
            where key = any(${sql.array(maxKeys as unknown as string[], 17)}::bytea[])
              and (expires_at is null or expires_at > clock_timestamp())`;
          for (const r of rows) counters.set(hexOf(r.key), decoder.decode(new Uint8Array(r.value)));
        }
        // The final state of each key written, mutations applied in order.
        const after = new Map<string, { k: Uint8Array; value: unknown; present: boolean; expireIn: number }>();
        for (const m of muts) {
          const h = hexOf(m.k);
          if (m.type === "set") {
            after.set(h, { k: m.k, value: m.value, present: true, expireIn: m.expireIn ?? -1 });
          } else if (m.type === "delete") {
            after.set(h, { k: m.k, value: null, present: false, expireIn: -1 });
          } else {
            const was = after.get(h);
            const base = was ? (was.present ? was.value : undefined) : counters.get(h);
            if (base !== undefined && typeof base !== "bigint") {
              throw new Error(`max(${JSON.stringify(m.key, keyJson)}): the key holds a value that is not a counter`);
            }
            after.set(h, { k: m.k, value: base === undefined || base < m.n ? m.n : base, present: true, expireIn: -1 });
          }
        }
        const [{ v }] = await tx<{ v: string }[]>`select nextval(${SEQUENCE}::regclass) as v`;
        const sets = [...after.values()].filter((a) => a.present);
        const dels = [...after.values()].filter((a) => !a.present);
        if (sets.length > 0) {
          await tx`
            insert into ${sql(TABLE)} (key, value, versionstamp, expires_at)
            select k, val, ${v}::int8, case when e < 0 then null else clock_timestamp() + e * interval '1 millisecond' end
            from unnest(${sql.array(sets.map((a) => a.k) as unknown as string[], 17)}::bytea[],
                        ${sql.array(sets.map((a) => encoder.encode(a.value)) as unknown as string[], 17)}::bytea[],
                        ${sql.array(sets.map((a) => a.expireIn), 701)}::float8[]) as t(k, val, e)
            on conflict (key) do update
              set value = excluded.value, versionstamp = excluded.versionstamp, expires_at = excluded.expires_at`;
        }
        if (dels.length > 0) {
          await tx`delete from ${sql(TABLE)}
            where key = any(${sql.array(dels.map((a) => a.k) as unknown as string[], 17)}::bytea[])`;
        }
        return { ok: true, versionstamp: versionstampOf(v) } as DbCommit;
      }) as Promise<DbCommit>);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    await this.#sql.end({ timeout: 1 }).catch(() => {});
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** JSON.stringify replacer for keys: bigints and byte strings printed readably. */
function keyJson(_k: string, v: unknown): unknown {
  if (typeof v === "bigint") return `${v}n`;
  if (v instanceof Uint8Array) return `bytes:${hexOf(v)}`;
  return v;
}
