/**
 * Per-process scratch: the one place for state that belongs to the process rather than to a cell, an entity or a
 * connection. Everything here is a buffer reused to avoid allocating on hot paths, or bookkeeping of the code that
 * is running right now (the tick being batched, the entity being charged CPU); none of it says anything about the
 * world. State with an owner (a cell's witnesses, an entity's history) is a field of that owner instead, never a
 * module-level map.
 *
 * Each part is one object whose identity never changes, so a module may keep a handle to it; `resetScratch` puts
 * every part back as a fresh process has it (tests that want a clean slate call it between runs, never in a tick).
 */
import { ByteWriter } from "./bytes/mod.ts";

/** Something with buffered writes to flush at the end of a tick (core/wire/outbox.ts). */
export interface Flushable {
  flush(): void;
}

/** Tick batching (core/wire/outbox.ts): how deep ticks nest now, and what was written during them. */
export interface OutboxScratch {
  depth: number;
  readonly dirty: Flushable[];
}

/**
 * The storage of the entities' rows (cell/witness/entity_rows.ts): each entity's pose, state bits and newest event
 * number, one row per entity object, kept side by side for the witnesses that read them.
 */
export interface RowScratch {
  /** The rows, indexed by an entity's `row`. */
  a: Float64Array;
  /** Numbers of `a` in use, freed rows included. */
  used: number;
  /** Rows of collected entities, ready for reuse. */
  readonly free: number[];
  /** Puts an entity's row on `free` once the entity is collected. */
  readonly registry: FinalizationRegistry<number>;
}

/** Where witnesses' frames are copied for their sinks (cell/witness/frame_arena.ts). */
export interface ArenaScratch {
  arena: ArrayBuffer;
  bytes: Uint8Array;
  used: number;
}

/** The stack of entities being charged CPU, innermost last (cell/load/entity_load.ts). */
export interface LoadScratch {
  /** Each charged slot's CPU array. */
  readonly arrays: Float64Array[];
  /** Each charged slot's index in its array. */
  readonly slots: number[];
  depth: number;
  /** When the top started being charged; in a typed array, as a double in a field is boxed at every write. */
  readonly clock: Float64Array;
}

/** Buffers that encoders reuse; each is reset by the code that writes it, and holds nothing between calls. */
export interface WriterScratch {
  /** Ghost property changes (cell/borders/ghosts.ts). */
  readonly ghostChange: ByteWriter;
  /** Ghost operation batches (cell/borders/borders.ts). */
  readonly ghostOps: ByteWriter;
  /** Property changes held during a hand-over (cell/borders/handover_fence.ts). */
  readonly handoverChange: ByteWriter;
  /** Event history changes and calls (cell/witness/event_history.ts). */
  readonly historyEvent: ByteWriter;
}

/** Where a witness's cache warm-up leaves the sum of what it read, so that its reads are not optimised away. */
export interface WarmthScratch {
  sum: number;
}

/** Life numbers of event histories (cell/witness/event_history.ts): the next one to hand out. */
export interface LifeScratch {
  next: number;
}

/** Bytes of a frame arena. */
export const ARENA_BYTES = 64 * 1024;
/** Row capacity a fresh process starts with, in numbers. */
const FIRST_ROWS = 1024 * 8;
/** Depth the load stack starts with (it grows past it as needed). */
const LOAD_DEPTH = 16;

/** Where the time of sections that charge no entity goes (the gaps before a loop's first entity); never reset. */
export const NOBODY: Float64Array = new Float64Array(1);

function firstLife(): number {
  return 1 + Math.floor(Math.random() * 0xffff_fffe);
}

/** The per-process scratch; see the module comment. */
export const scratch: {
  readonly outbox: OutboxScratch;
  readonly rows: RowScratch;
  readonly arena: ArenaScratch;
  readonly load: LoadScratch;
  readonly writers: WriterScratch;
  readonly lives: LifeScratch;
  readonly warmth: WarmthScratch;
} = {
  outbox: { depth: 0, dirty: [] },
  rows: {
    a: new Float64Array(FIRST_ROWS),
    used: 0,
    free: [],
    registry: new FinalizationRegistry<number>((row) => scratch.rows.free.push(row)),
  },
  arena: newArena(),
  load: {
    arrays: new Array(LOAD_DEPTH).fill(NOBODY),
    slots: new Array(LOAD_DEPTH).fill(0),
    depth: 0,
    clock: new Float64Array(1),
  },
  writers: {
    ghostChange: new ByteWriter(256),
    ghostOps: new ByteWriter(1024),
    handoverChange: new ByteWriter(256),
    historyEvent: new ByteWriter(256),
  },
  lives: { next: firstLife() },
  warmth: { sum: 0 },
};

function newArena(): ArenaScratch {
  const arena = new ArrayBuffer(ARENA_BYTES);
  return { arena, bytes: new Uint8Array(arena), used: 0 };
}

/**
 * Puts every part back as a fresh process has it, but for the rows: those belong to the entities still alive (a
 * collected one frees its own), so they are kept. For between tests, not for the middle of a tick.
 */
export function resetScratch(): void {
  const { outbox, arena, load, lives, warmth } = scratch;
  outbox.depth = 0;
  outbox.dirty.length = 0;
  Object.assign(arena, newArena());
  load.arrays.length = 0;
  load.slots.length = 0;
  for (let i = 0; i < LOAD_DEPTH; i++) {
    load.arrays.push(NOBODY);
    load.slots.push(0);
  }
  load.depth = 0;
  load.clock[0] = 0;
  lives.next = firstLife();
  warmth.sum = 0;
}
