/**
 * The Deno KV backend: a thin pass-through to Deno.Kv (a file, ":memory:", or a KV Connect URL reached with
 * DENO_KV_ACCESS_TOKEN). Counters (Deno.KvU64) read as bigint, as the interface has them.
 */
import { errorText } from "../errors.ts";
import type { Db, DbAtomic, DbCheck, DbCommit, DbEntry, DbKey, DbSetOptions } from "./types.ts";

function entry<T>(e: Deno.KvEntryMaybe<unknown>): DbEntry<T> {
  const v = e.value instanceof Deno.KvU64 ? e.value.value : e.value;
  return { key: e.key as DbKey, value: v as T | null, versionstamp: e.versionstamp };
}

function commitResult(r: Deno.KvCommitResult | Deno.KvCommitError): DbCommit {
  return r.ok ? { ok: true, versionstamp: r.versionstamp } : { ok: false };
}

class KvAtomic implements DbAtomic {
  constructor(private readonly op: Deno.AtomicOperation) {}

  check(...checks: DbCheck[]): DbAtomic {
    this.op.check(...checks.map((c) => ({ key: c.key as Deno.KvKey, versionstamp: c.versionstamp })));
    return this;
  }

  set(key: DbKey, value: unknown, options?: DbSetOptions): DbAtomic {
    this.op.set(key as Deno.KvKey, value, options);
    return this;
  }

  delete(key: DbKey): DbAtomic {
    this.op.delete(key as Deno.KvKey);
    return this;
  }

  max(key: DbKey, n: bigint): DbAtomic {
    this.op.max(key as Deno.KvKey, n);
    return this;
  }

  async commit(): Promise<DbCommit> {
    return commitResult(await this.op.commit());
  }
}

/** A Deno KV database behind the Db interface. */
export class DenoKvDb implements Db {
  constructor(readonly kv: Deno.Kv, readonly description: string = "Deno KV") {}

  async get<T = unknown>(key: DbKey): Promise<DbEntry<T>> {
    return entry<T>(await this.kv.get(key as Deno.KvKey));
  }

  async getMany<T extends readonly unknown[]>(keys: readonly DbKey[]): Promise<{ [K in keyof T]: DbEntry<T[K]> }> {
    const got = await this.kv.getMany(keys as Deno.KvKey[]);
    return got.map((e) => entry(e)) as { [K in keyof T]: DbEntry<T[K]> };
  }

  async set(key: DbKey, value: unknown, options?: DbSetOptions): Promise<DbCommit> {
    return commitResult(await this.kv.set(key as Deno.KvKey, value, options));
  }

  async delete(key: DbKey): Promise<void> {
    await this.kv.delete(key as Deno.KvKey);
  }

  async *list<T = unknown>(prefix: DbKey): AsyncIterableIterator<DbEntry<T>> {
    for await (const e of this.kv.list({ prefix: prefix as Deno.KvKey })) yield entry<T>(e);
  }

  atomic(): DbAtomic {
    return new KvAtomic(this.kv.atomic());
  }

  close(): Promise<void> {
    this.kv.close();
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Opens Deno KV from a --kv value: ":memory:", a KV Connect URL (a remote denokv, authenticated by
 * DENO_KV_ACCESS_TOKEN), or a file path whose folder is created when missing.
 */
export async function openDenoKv(spec: string): Promise<DenoKvDb> {
  const where = spec === ":memory:" ? "Deno KV in memory" : `Deno KV at ${spec}`;
  if (spec === ":memory:" || /^https?:\/\//.test(spec)) return new DenoKvDb(await Deno.openKv(spec), where);
  const slash = spec.lastIndexOf("/");
  if (slash > 0) await Deno.mkdir(spec.slice(0, slash), { recursive: true });
  try {
    return new DenoKvDb(await Deno.openKv(spec), where);
  } catch (e) {
    throw new Error(`cannot open Deno KV at ${spec}: ${errorText(e)}`, { cause: e });
  }
}
