/**
 * A hand-over of a real (an offload or a teleport) from the old cell's side:
 * fenced from its start (handover_fence.ts), settled when the new cell answers,
 * and what was done to it meanwhile done again by the new real.
 */
import { errorText } from "../../core/errors.ts";
import { ByteReader, readChange } from "../../core/def/mod.ts";
import { CellMsg } from "../../core/wire/mod.ts";
import type { GhostHost } from "../cell_host.ts";
import type { CellAddress } from "../cell_layout.ts";
import type { Entity } from "../entity.ts";
import { type FencedWrite, HandOverFence, type Offloading } from "./handover_fence.ts";

/** What a hand-over needs of the cell of its real. */
export interface HandOverCell {
  readonly host: { readonly ghosting: GhostHost };
  moveEntity(e: Entity, x: number, y: number, z: number): void;
  destroyEntity(e: Entity, reason?: string, tellBase?: boolean): void;
}

/** Starts handing `e` over to cell `to` of space `spaceId`: it is fenced until settleHandOver. */
export function beginHandOver(e: Entity, to: CellAddress, spaceId: number): Offloading {
  const o: Offloading = { cell: to.cell, cellapp: to.cellapp, address: to.address, spaceId, held: [], fence: null! };
  o.fence = new HandOverFence(e);
  e.offloading = o;
  return o;
}

/**
 * Ends the hand-over of `e`. When it moved, what was done to it meanwhile goes
 * to the new real, ahead of the held messages (which the caller runs next,
 * forwarding them the same way); when it stayed, it is published here.
 * Returns the held messages.
 */
export function settleHandOver(cell: HandOverCell, e: Entity, moved: boolean): Offloading["held"] {
  const o = e.offloading!;
  e.offloading = null;
  if (!moved) {
    const destroyed = o.fence.replay();
    if (destroyed) cell.destroyEntity(e, String(destroyed[1]), destroyed[2] === true);
    return o.held;
  }
  const writes = o.fence.close();
  if (writes.length > 0) {
    cell.host.ghosting.send(o.address, CellMsg.handOverWrites, o.spaceId, o.cell, e.id, writes);
  }
  return o.held;
}

/**
 * Does to the real `e` what was done to it during its hand-over, in order.
 * Throws, naming the entity, on a record it cannot read.
 */
export function applyHandOverWrites(cell: HandOverCell, e: Entity, writes: readonly FencedWrite[]): void {
  const who = `${e.type.name} ${e.id}`;
  for (const w of writes) {
    if (e.destroyed) return;
    switch (w[0]) {
      case 0: {
        const [, x, y, z, yaw, pitch, roll] = w as number[];
        [e.yaw, e.pitch, e.roll] = [yaw, pitch, roll];
        cell.moveEntity(e, x, y, z);
        break;
      }
      case 1: {
        if (!(w[1] instanceof Uint8Array)) throw new Error(`${who}: a change made during its hand-over is not bytes`);
        try {
          e.container.apply(readChange(new ByteReader(w[1]), e.type, "internal"));
        } catch (err) {
          throw new Error(`${who}: a change made during its hand-over does not apply: ${errorText(err)}`, {
            cause: err,
          });
        }
        break;
      }
      case 2:
        cell.destroyEntity(e, String(w[1]), w[2] === true);
        break;
      default:
        throw new Error(`${who}: unknown kind ${String(w[0])} of what was done during its hand-over`);
    }
  }
}
