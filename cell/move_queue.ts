/**
 * Client moves a cellapp has read and checked, applied together shortly before its next tick (docs/architecture.md,
 * "Client moves wait for the tick"). Applied one batch at a time as they arrive, each move found the range list and
 * the entity out of the processor's cache; applied together, they share it. A move applied later is a move that
 * arrived later, which the cluster already allows; what the queue keeps is each entity's order: a message about an
 * entity applies that entity's waiting moves before it runs, and any other message that acts on a real applies all.
 */
import { MOVE_RECORD } from "../core/wire/mod.ts";
import type { Channel, Handlers, MessageDef } from "../core/wire/mod.ts";

/** Once this many moves wait they are applied at once: a bound on what a flush holds up and on the copies kept. */
export const MAX_QUEUED_MOVES = 1024;

/** Applies one batch of move records from `from` (checked when it arrived). */
export type ApplyMoves = (from: Channel, records: Uint8Array) => void;

/** Which entities a message is about, from its arguments; null: it may touch any. */
export type EntitiesOf = (def: MessageDef<unknown[], unknown>, args: unknown[]) => readonly number[] | null;

/** A batch as the queue keeps it: its own copy of the records, and a view of their ids (0 once applied early). */
interface Batch {
  readonly from: Channel;
  readonly records: Uint8Array;
  readonly view: DataView;
}

/** The batches of client moves read since the last tick, in the order they came. */
export class MoveQueue {
  #batches: Batch[] = [];
  #bytes = 0;

  /**
   * `apply` applies a batch; `failed` is told of one whose application threw (the rest still go); past `maxBytes`
   * waiting, the queue applies what it holds at once.
   */
  constructor(
    private readonly apply: ApplyMoves,
    private readonly failed: (why: unknown) => void,
    readonly maxBytes: number = MAX_QUEUED_MOVES * MOVE_RECORD,
  ) {}

  /** Bytes of move records waiting. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Keeps a copy of `records` from `from` (the channel reuses its buffer) until the next `flush`, or flushes. */
  add(from: Channel, records: Uint8Array): void {
    const copy = records.slice();
    this.#batches.push({ from, records: copy, view: new DataView(copy.buffer) });
    this.#bytes += copy.length;
    if (this.#bytes >= this.maxBytes) this.flush();
  }

  /**
   * Applies the waiting batches in order. A batch from a channel closed since is dropped: its baseapp is gone or was
   * dropped, and its clients' next moves go through the baseapp that takes them over.
   */
  flush(): void {
    if (this.#batches.length === 0) return;
    const batches = this.#batches;
    this.#batches = [];
    this.#bytes = 0;
    for (const b of batches) {
      if (!b.from.isOpen) continue;
      // Runs of records not applied early.
      const { records, view } = b;
      let start = 0;
      for (let at = 0; at <= records.length; at += MOVE_RECORD) {
        if (at < records.length && view.getFloat64(at, true) !== 0) continue;
        if (at > start) this.#apply(b.from, records.subarray(start, at));
        start = at + MOVE_RECORD;
      }
    }
  }

  /**
   * Applies the waiting moves of entity `id` now, in order; the others keep waiting. It looks through every waiting
   * record (at most MAX_QUEUED_MOVES), which costs less than keeping an index of them as they come.
   */
  flushEntity(id: number): void {
    for (const b of this.#batches) {
      const { records, view } = b;
      for (let at = 0; at < records.length; at += MOVE_RECORD) {
        if (view.getFloat64(at, true) !== id) continue;
        const one = records.slice(at, at + MOVE_RECORD);
        view.setFloat64(at, 0, true);
        if (b.from.isOpen) this.#apply(b.from, one);
      }
    }
  }

  /**
   * Has each handler of `defs` on `handlers` apply waiting moves before it runs: those of the entities `about` names
   * for its arguments, or all of them when it names none (or is not given).
   */
  before(handlers: Handlers, defs: readonly MessageDef<unknown[], unknown>[], about: EntitiesOf = () => null): void {
    handlers.wrap(defs, "applying client moves first", (def, handler) => (ch, ...args) => {
      const ids = about(def, args);
      if (ids === null) this.flush();
      else for (const id of ids) this.flushEntity(id);
      return handler(ch, ...args);
    });
  }

  #apply(from: Channel, records: Uint8Array): void {
    try {
      this.apply(from, records);
    } catch (e) {
      this.failed(e);
    }
  }
}
