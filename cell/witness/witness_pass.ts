/** The pass over a cell's witnesses at the end of each tick. */
import type { WitnessCell } from "./host.ts";
import { enterLoop, leaveEntity, switchEntity } from "../load/entity_load.ts";
import { newGeneration, passToken } from "./entity_rows.ts";

/** Runs every witness of a cell once, each charged to its entity; the cell calls it at the end of each tick. */
export function updateWitnesses(cell: WitnessCell): void {
  const set = cell.witnesses;
  if (set.size === 0) return;
  // Entities moved since the last pass: the rows witnesses read them from (entity_rows.ts) are copied afresh.
  newGeneration();
  enterLoop();
  try {
    for (const w of set) {
      switchEntity(w.entity);
      passToken.held = true;
      w.update();
      passToken.held = false;
    }
  } finally {
    passToken.held = false;
    leaveEntity();
  }
}
