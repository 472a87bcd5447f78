/** The pass over a cell's witnesses at the end of each tick. */
import type { WitnessCell } from "./host.ts";
import { enterLoop, leaveEntity, switchEntity } from "../load/entity_load.ts";

/** Runs every witness of a cell once, each charged to its entity; the cell calls it at the end of each tick. */
export function updateWitnesses(cell: WitnessCell): void {
  const set = cell.witnesses;
  if (set.size === 0) return;
  enterLoop();
  try {
    for (const w of set) {
      switchEntity(w.entity);
      w.update();
    }
  } finally {
    leaveEntity();
  }
}
