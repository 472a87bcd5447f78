/**
 * Persistent entities in the database (core/db: Deno KV or PostgreSQL). One entity is a meta record plus its base
 * and cell persistent state (encodePersistentState: msgpack maps by property
 * name) split into chunks below KV's value limit; a save writes all of them
 * in one atomic commit, so a reader never sees half of a logout. Saves that
 * wait at the same time share one commit.
 *
 * Keys: ["entity", id, "meta"], ["entity", id, "base", n], ["entity", id, "cell", n]; a save also raises the
 * database's held-id mark (held_ids.ts).
 */

import { errorText } from "../../core/errors.ts";
import type { Db, DbAtomic, DbCheck, DbCommit, DbEntry, DbUnavailableError } from "../../core/db/mod.ts";
import { withKvRetry } from "./kv_retry.ts";
import { holdId } from "./held_ids.ts";

/** What is stored per entity. */
export interface StoredEntity {
  type: string;
  /** Persistent base properties (encodePersistentState of the base part). */
  base: Uint8Array;
  /** Persistent cell properties (encodePersistentState of the cell part). */
  cell: Uint8Array;
  position: [number, number, number];
  direction: [number, number, number];
  spaceId: number;
}

interface Meta {
  type: string;
  position: [number, number, number];
  direction: [number, number, number];
  spaceId: number;
  baseChunks: number;
  cellChunks: number;
  savedAt: number;
}

/** Largest chunk written (Deno KV refuses values over 64 KiB). */
export const CHUNK = 60_000;

function chunks(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += CHUNK) out.push(bytes.slice(i, i + CHUNK));
  return out;
}

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Most entities written in one commit: each adds a check of its meta record, and one of its account's checkout, to
 * the atomic operation (Deno KV allows 100 checks).
 */
export const MAX_GROUP = 50;
/** Most bytes of state in one grouped commit (Deno KV refuses more than 800 KiB of mutations in one). */
const MAX_GROUP_BYTES = 600_000;
/** Most mutations in one grouped commit (Deno KV allows 1,000). */
const MAX_GROUP_MUTATIONS = 900;

/** A save waiting for its group's commit. */
interface PendingSave {
  id: number;
  e: StoredEntity;
  done: PromiseWithResolvers<void>;
}

/**
 * Loads and saves persistent entities. Saves asked for while a commit is under way (or in the same turn) are written
 * together in one atomic commit, one check per entity: a baseapp autosaving 50 entities a second makes one commit
 * instead of 50, each of which costs a SQLite transaction and an fsync.
 */
export class EntityStore {
  /** Told how long each commit took (s), for the metrics. */
  onCommit: ((seconds: number) => void) | null = null;
  /** Awaited before each commit: a baseapp that may have been fenced writes nothing until it is confirmed. */
  gate: (() => Promise<void>) | null = null;
  /** Told why a grouped commit failed before its saves were retried one by one (each then reports its own error). */
  onGroupFailed: ((why: string) => void) | null = null;
  /**
   * Told each time a save waits for an unreachable database (it is retried until the database answers: a save
   * acknowledged to its caller is never lost to an outage).
   */
  onUnavailable: ((e: DbUnavailableError) => void) | null = null;
  /**
   * The account checkout a save of entity `id` must find unchanged (checkout.ts), or null for none: a base whose
   * checkout another baseapp claimed since (the account lives there now) writes nothing.
   */
  holderCheck: ((id: number) => DbCheck | null) | null = null;
  readonly stats = { commits: 0, grouped: 0 };
  #pending: PendingSave[] = [];
  #draining = false;

  constructor(private readonly kv: Db) {}

  /** Retries of a save: while the database is locked, and while it is unreachable, however long that takes. */
  #waiting = {
    waitWhileUnavailable: true,
    onUnavailable: (e: DbUnavailableError) => this.onUnavailable?.(e),
  };

  /**
   * The entity's stored state, or null when it was never saved. Throws DbUnavailableError at once while the
   * database is unreachable (a login waiting on it is refused instead).
   */
  load(id: number): Promise<StoredEntity | null> {
    return withKvRetry(() => this.#load(id));
  }

  async #load(id: number): Promise<StoredEntity | null> {
    const meta = (await this.kv.get<Meta>(["entity", id, "meta"])).value;
    if (!meta) return null;
    const part = async (name: string, count: number): Promise<Uint8Array> => {
      const keys = Array.from({ length: count }, (_, i) => ["entity", id, name, i]);
      const got: Uint8Array[] = [];
      // getMany takes at most 10 keys.
      for (let i = 0; i < keys.length; i += 10) {
        for (const e of await this.kv.getMany<Uint8Array[]>(keys.slice(i, i + 10))) {
          if (!e.value) throw new Error(`entity ${id}: chunk ${String(e.key.at(-1))} of its ${name} state is missing`);
          got.push(e.value);
        }
      }
      return join(got);
    };
    return {
      type: meta.type,
      base: await part("base", meta.baseChunks),
      cell: await part("cell", meta.cellChunks),
      position: meta.position,
      direction: meta.direction,
      spaceId: meta.spaceId,
    };
  }

  /**
   * Writes the entity's state in one atomic commit, with the other saves asked for meanwhile; resolves once it is
   * committed (retried alone if another save raced it).
   */
  save(id: number, e: StoredEntity): Promise<void> {
    const done = Promise.withResolvers<void>();
    this.#pending.push({ id, e, done });
    if (!this.#draining) {
      this.#draining = true;
      // The rest of this turn's saves join the first group.
      setTimeout(() => void this.#drain(), 0);
    }
    return done.promise;
  }

  /** Commits the waiting saves group after group, in the order they were asked for. */
  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) await this.#commitGroup(this.#takeGroup());
    } finally {
      this.#draining = false;
    }
  }

  /** The first saves waiting, within the limits of one commit; an entity already in the group ends it. */
  #takeGroup(): PendingSave[] {
    const group: PendingSave[] = [];
    const ids = new Set<number>();
    let bytes = 0, mutations = 1;
    for (const p of this.#pending) {
      const size = p.e.base.length + p.e.cell.length;
      const muts = 1 + Math.ceil(p.e.base.length / CHUNK) + Math.ceil(p.e.cell.length / CHUNK);
      const full = group.length >= MAX_GROUP || bytes + size > MAX_GROUP_BYTES ||
        mutations + muts > MAX_GROUP_MUTATIONS;
      if (group.length > 0 && (full || ids.has(p.id))) break;
      group.push(p);
      ids.add(p.id);
      bytes += size;
      mutations += muts;
    }
    this.#pending.splice(0, group.length);
    return group;
  }

  async #commitGroup(group: PendingSave[]): Promise<void> {
    if (group.length > 1) {
      try {
        await this.gate?.();
        const metas = group.map((p) => ["entity", p.id, "meta"]);
        const olds: DbEntry<Meta>[] = [];
        // getMany takes at most 10 keys.
        for (let i = 0; i < metas.length; i += 10) {
          olds.push(...await withKvRetry(() => this.kv.getMany<Meta[]>(metas.slice(i, i + 10)), this.#waiting));
        }
        const op = this.kv.atomic();
        let top = 0;
        group.forEach((p, k) => {
          addSave(op, p.id, p.e, olds[k], this.holderCheck?.(p.id) ?? null);
          top = Math.max(top, p.id);
        });
        holdId(op, top);
        // The gate again before each try: a save that waited out an outage writes nothing if this baseapp was fenced.
        const res = await withKvRetry(async () => {
          await this.gate?.();
          return await this.#commit(op);
        }, this.#waiting);
        if (res.ok) {
          this.stats.grouped++;
          for (const p of group) p.done.resolve();
          return;
        }
        this.onGroupFailed?.(`a grouped save of ${group.length} entities raced another save`);
      } catch (e) {
        this.onGroupFailed?.(`a grouped save of ${group.length} entities failed: ${errorText(e)}`);
      }
    }
    // Alone, or after the group failed: each save is retried on its own and reports its own error.
    await Promise.all(group.map((p) =>
      (async () => {
        await withKvRetry(async () => {
          await this.gate?.();
          await this.#saveOne(p.id, p.e);
        }, this.#waiting);
      })().then(p.done.resolve, p.done.reject)
    ));
  }

  async #commit(op: DbAtomic): Promise<DbCommit> {
    const start = performance.now();
    const res = await op.commit();
    this.stats.commits++;
    this.onCommit?.((performance.now() - start) / 1000);
    return res;
  }

  async #saveOne(id: number, e: StoredEntity): Promise<void> {
    const metaKey = ["entity", id, "meta"];
    for (let attempt = 0; attempt < 5; attempt++) {
      const old = await this.kv.get<Meta>(metaKey);
      const holder = this.holderCheck?.(id) ?? null;
      const op = holdId(addSave(this.kv.atomic(), id, e, old, holder), id);
      if ((await this.#commit(op)).ok) return;
      if (holder && (await this.kv.get(holder.key)).versionstamp !== holder.versionstamp) {
        throw new Error(
          `entity ${id} was not saved: its account was checked out to another base since this one claimed it`,
        );
      }
    }
    throw new Error(`could not save entity ${id}: other saves kept racing it`);
  }
}

/**
 * Adds the writes of one entity's save to `op`: its meta record (checked against `old`), its chunks, and the removal
 * of chunks it no longer has.
 */
function addSave(
  op: DbAtomic,
  id: number,
  e: StoredEntity,
  old: DbEntry<Meta>,
  holder: DbCheck | null,
): DbAtomic {
  const base = chunks(e.base);
  const cell = chunks(e.cell);
  const meta: Meta = {
    type: e.type,
    position: e.position,
    direction: e.direction,
    spaceId: e.spaceId,
    baseChunks: base.length,
    cellChunks: cell.length,
    savedAt: Date.now(),
  };
  op.check(old).set(["entity", id, "meta"], meta);
  if (holder) op.check(holder);
  base.forEach((c, i) => op.set(["entity", id, "base", i], c));
  cell.forEach((c, i) => op.set(["entity", id, "cell", i], c));
  for (let i = base.length; i < (old.value?.baseChunks ?? 0); i++) op.delete(["entity", id, "base", i]);
  for (let i = cell.length; i < (old.value?.cellChunks ?? 0); i++) op.delete(["entity", id, "cell", i]);
  return op;
}
