/**
 * Persistent entities in Deno KV. One entity is a meta record plus its base
 * and cell persistent state (encodePersistentState: msgpack maps by property
 * name) split into chunks below KV's value limit; a save writes all of them
 * in one atomic commit, so a reader never sees half of a logout.
 *
 * Keys: ["entity", id, "meta"], ["entity", id, "base", n], ["entity", id, "cell", n]; a save also raises the
 * database's held-id mark (held_ids.ts).
 */

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

/** Loads and saves persistent entities. */
export class EntityStore {
  /** Told how long each commit took (s), for the metrics. */
  onCommit: ((seconds: number) => void) | null = null;

  constructor(private readonly kv: Deno.Kv) {}

  /** The entity's stored state, or null when it was never saved. */
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

  /** Writes the entity's state in one atomic commit (retried if another save raced it). */
  save(id: number, e: StoredEntity): Promise<void> {
    return withKvRetry(() => this.#save(id, e));
  }

  async #save(id: number, e: StoredEntity): Promise<void> {
    const metaKey = ["entity", id, "meta"];
    for (let attempt = 0; attempt < 5; attempt++) {
      const old = await this.kv.get<Meta>(metaKey);
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
      const op = holdId(this.kv.atomic().check(old).set(metaKey, meta), id);
      base.forEach((c, i) => op.set(["entity", id, "base", i], c));
      cell.forEach((c, i) => op.set(["entity", id, "cell", i], c));
      for (let i = base.length; i < (old.value?.baseChunks ?? 0); i++) op.delete(["entity", id, "base", i]);
      for (let i = cell.length; i < (old.value?.cellChunks ?? 0); i++) op.delete(["entity", id, "cell", i]);
      const start = performance.now();
      const res = await op.commit();
      this.onCommit?.((performance.now() - start) / 1000);
      if (res.ok) return;
    }
    throw new Error(`could not save entity ${id}: other saves kept racing it`);
  }
}
