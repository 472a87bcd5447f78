/**
 * The fence around a hand-over (an offload or a teleport). From the moment a
 * real's state is sent to another cell until that cell answers, the old real
 * is no longer the truth, and not yet a ghost. Messages for it wait
 * (Offloading.held); what is done to it anyway (a script setting its
 * properties or moving it, its destruction) is recorded in order instead of
 * reaching its ghosts, history and clients. Once the hand-over succeeds the
 * record goes to the new real, which does it all again in the same order
 * (the old real forwards what it gets to the new one); if it fails,
 * the old real, still real, publishes it itself.
 */
import {
  ByteReader,
  ByteWriter,
  type ChangeSink,
  type PropertyDef,
  readChange,
  writeChange,
} from "../../core/def/mod.ts";
import type { EntityType, PropertyContainer } from "../../core/def/mod.ts";
import type { CellAddress } from "../cell_layout.ts";
import type { Pose } from "../pose.ts";
import { scratch as processScratch } from "../../core/scratch.ts";

/**
 * One thing done to a fenced real: [0, x, y, z, yaw, pitch, roll] it was
 * moved; [1, change bytes] a property changed (internal indices); [2, reason,
 * tellBase] it was destroyed.
 */
export type FencedWrite = unknown[];

/** What the old cell keeps while a hand-over of one of its reals is in flight. */
export interface Offloading extends CellAddress {
  /** The space of the cell it goes to (another one for a teleport between spaces). */
  spaceId: number;
  /** Messages for the entity that arrived meanwhile, run or forwarded (to where the real went) once it settles. */
  held: ((movedTo: CellAddress | null) => void)[];
  /** What is done to the entity meanwhile. */
  fence: HandOverFence;
}

/** The process's buffer for changes held during a hand-over (core/scratch.ts). */
const scratch: ByteWriter = processScratch.writers.handoverChange;

/** What the fence reads of the real it is around: its properties and where it is. */
export interface FencedEntity extends Pose {
  readonly type: EntityType;
  readonly container: PropertyContainer;
}

/** Records what is done to a real while it is handed over; its container's sink meanwhile. */
export class HandOverFence implements ChangeSink {
  /** What was done, in order. */
  readonly writes: FencedWrite[] = [];
  readonly #saved: ChangeSink | null;
  /** Where the real was (x, y, z, yaw, pitch, roll) when its state was taken. */
  readonly #at: number[];

  constructor(private readonly entity: FencedEntity) {
    this.#saved = entity.container.sink;
    entity.container.sink = this;
    this.#at = [entity.x, entity.y, entity.z, entity.yaw, entity.pitch, entity.roll];
  }

  /** ChangeSink: a property change is kept, not published. */
  onChange(prop: PropertyDef, path: readonly number[], value: unknown, start: number, end: number): void {
    writeChange(scratch.reset(), prop, path, value, start, end, "internal");
    this.writes.push([1, scratch.toBytes()]);
  }

  /** The real was destroyed while fenced: the new real is destroyed instead (or this one, if it stays). */
  destroyed(reason: string, tellBase: boolean): void {
    this.writes.push([2, reason, tellBase]);
  }

  /** Takes the fence down; returns what the new real has to do (a move first, if the real was moved meanwhile). */
  close(): FencedWrite[] {
    const e = this.entity;
    if (e.container.sink === this) e.container.sink = this.#saved;
    const now = [e.x, e.y, e.z, e.yaw, e.pitch, e.roll];
    if (now.some((v, i) => v !== this.#at[i])) this.writes.unshift([0, ...now]);
    return this.writes;
  }

  /**
   * The hand-over failed: the real stays, and publishes what was done to it meanwhile, in order, up to its
   * destruction if it was destroyed meanwhile: that record is returned for the caller to carry out (the fence
   * reaches no cell).
   */
  replay(): FencedWrite | undefined {
    const e = this.entity;
    for (const w of this.close()) {
      if (w[0] === 1) {
        const rec = readChange(new ByteReader(w[1] as Uint8Array), e.type, "internal");
        e.container.sink?.onChange(e.type.properties[rec.index], rec.path, rec.value, rec.start, rec.end);
      } else if (w[0] === 2) {
        return w;
      }
    }
    return undefined;
  }
}
