/**
 * A witness as plain data, so that it travels with its entity when the entity offloads to another cell (BigWorld's
 * writeOffloadData / readAoI): its settings, the reference position the client holds, every cache with its state,
 * event numbers, per-level stamps, detail level, alias and priority, the alias free list, own-client messages not
 * sent yet and the counters. Everything is numbers, arrays and a Uint8Array, for msgpack.
 *
 * On the new cell each cache is matched with the entity there (a real or a ghost): present, it keeps its record,
 * so the client sees neither a leave nor an enter (unless it is another life of the entity there: then the client's
 * copy leaves and the one here enters); absent, the client is told it left. A cache whose entity's
 * history there no longer reaches back to its last event gets the refresh witness_send.ts already does for a gap
 * (the changed properties, no leave and enter).
 */
import { NO_ALIAS, writeLeave } from "../../core/proto/mod.ts";
import type { ByteWriter } from "../../core/def/mod.ts";
import type { WitnessCell } from "./host.ts";
import type { Entity } from "../entity.ts";
import {
  CacheTable,
  CREATED,
  DEADLINE,
  ENTER_PENDING,
  F,
  FLAG_QUEUED,
  FLAG_REPLACED,
  FLAGS,
  HSEQ,
  LAST_EVENT,
  LIFE,
} from "./entity_cache.ts";
import { ALIAS, LEVEL, REQUEST_PENDING, STATE } from "./entity_cache.ts";
import { historyOf } from "./event_history.ts";

export type { CacheState, WitnessState } from "../../core/wire/mod.ts";
import type { SlotHeap } from "./priority_queue.ts";
import type { CacheState, WitnessState } from "../../core/wire/mod.ts";
import type { WitnessOptions } from "./witness_options.ts";
import type { WitnessStats } from "./witness_send.ts";

/** The parts of a witness its state is read from and written to (the witness hands them over). */
export interface WitnessParts {
  readonly entity: Entity;
  readonly t: CacheTable;
  readonly caches: Map<number, number>;
  readonly heap: SlotHeap;
  readonly pending: Set<number>;
  readonly freeAliases: number[];
  readonly own: ByteWriter;
  readonly opts: WitnessOptions;
  readonly scripted: Set<string>;
  readonly stats: WitnessStats;
  reference: [number, number, number, number, number];
}

/** The witness's state now. */
export function captureWitness(p: WitnessParts): WitnessState {
  const t = p.t, now = p.entity.cell.time;
  const queued = new Map<number, number>();
  p.heap.forEach((s, prio) => queued.set(s, prio));
  const caches: CacheState[] = [];
  for (const [id, s] of p.caches) {
    const record = Array.from(t.f.subarray(s * F, (s + 1) * F));
    record[DEADLINE] -= now;
    record[FLAGS] = record[FLAGS] & ~FLAG_QUEUED;
    caches.push({ id, record, stamps: [...t.stamps[s]], queued: queued.get(s) ?? -1 });
  }
  const opts: Record<string, number> = {};
  for (const [k, v] of Object.entries(p.opts)) if (typeof v === "number") opts[k] = v;
  return {
    opts,
    reference: [...p.reference],
    caches,
    freeAliases: [...p.freeAliases],
    own: p.own.toBytes(),
    stats: { ...p.stats } as unknown as Record<string, number>,
    scripted: [...p.scripted],
  };
}

/** What loading a state found. */
export interface Restored {
  /** Caches whose entity is not in the new cell: the client was told they left (in `lost`). */
  lost: number;
}

/**
 * Loads a state into a fresh witness's parts: caches for the entities this cell holds (real or ghost), leaves
 * written to `leaves` for the others. The caller then adds the AoI triggers (whose first enters meet the caches and
 * change nothing) and takes out what the new triggers do not hold.
 */
export function restoreWitness(p: WitnessParts, state: WitnessState, cell: WitnessCell, leaves: ByteWriter): Restored {
  const t = p.t, now = cell.time, horizon = (p.opts.historyHorizonMs ?? undefined) as number | undefined;
  for (const k of Array.isArray(state.scripted) ? state.scripted : []) if (typeof k === "string") p.scripted.add(k);
  p.freeAliases.length = 0;
  p.freeAliases.push(...state.freeAliases);
  Object.assign(p.stats, state.stats);
  if (state.own.length > 0) p.own.raw(state.own);
  p.reference = [...state.reference];
  let lost = 0;
  for (const c of state.caches) {
    const e = c.id === p.entity.id ? undefined : cell.entities.get(c.id) ?? cell.ghosts.get(c.id);
    if (!e || e.destroyed) {
      lost++;
      const r = c.record;
      if (r[STATE] !== ENTER_PENDING) {
        // The client had it announced (and maybe created): it leaves, with the stamps of what it knows.
        const st = c.stamps;
        if (r[STATE] === CREATED) {
          for (let i = r[LEVEL]; i < st.length; i++) st[i] = r[LAST_EVENT];
          writeLeave(leaves, c.id, st, st.length);
        } else writeLeave(leaves, c.id, st, 0);
        p.stats.leaves++;
      }
      if (r[ALIAS] !== NO_ALIAS) p.freeAliases.push(r[ALIAS]);
      continue;
    }
    const h = historyOf(e, horizon);
    const s = t.alloc(e, h);
    const o = s * F, hseq = t.f[o + HSEQ];
    t.f.set(c.record, o);
    t.f[o + HSEQ] = hseq;
    t.f[o + DEADLINE] = c.record[DEADLINE] + now;
    let queued = c.queued;
    if (c.record[LIFE] === h.life) {
      t.set(s, FLAG_REPLACED, false);
      t.setDetailLevel(s, c.record[LEVEL]);
      copyStamps(t.stamps[s], c.stamps);
    } else if (c.record[STATE] === ENTER_PENDING) {
      // Nothing told yet: it enters as the life here.
      t.init(s, e, h);
      t.f[o + FLAGS] = c.record[FLAGS] & ~FLAG_REPLACED;
    } else {
      // The client holds another life of it than the one here: that one leaves first (witness.ts), in turn.
      t.set(s, FLAG_REPLACED, true);
      copyStamps(t.stamps[s], c.stamps);
      if (queued < 0) queued = 0;
    }
    p.caches.set(c.id, s);
    if (c.record[STATE] === REQUEST_PENDING) p.pending.add(s);
    if (queued >= 0) {
      t.set(s, FLAG_QUEUED, true);
      p.heap.push(s, queued);
    }
  }
  return { lost };
}

function copyStamps(to: number[], from: readonly number[]): void {
  to.length = from.length;
  for (let i = 0; i < to.length; i++) to[i] = from[i];
}
