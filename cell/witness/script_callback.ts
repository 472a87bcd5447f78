/** The witness's calls of its entity's script callbacks (onGetWitness, onEnteredAoI, ...). */
import type { Entity } from "../entity.ts";

/** Calls a script callback the way the cell does: errors are logged with the entity, never thrown. */
export function callScript(e: Entity, name: string, ...args: unknown[]): void {
  e.cell.callScript(e, name, ...args);
}
