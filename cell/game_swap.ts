/**
 * A cellapp's part of a game reload (docs/game.md#reloading-a-game): its registry adopts the new definitions in
 * place, every real and ghost follows them (new properties with their defaults), and every real's script takes its
 * type's new class with its state kept. Timers, movements, triggers, witnesses and hand-overs are untouched.
 */
import type { EntityRegistry } from "../core/def/mod.ts";
import type { CellScriptClass } from "../core/script.ts";
import type { Cell } from "./cell.ts";
import type { CellHost } from "./cell_host.ts";
import type { Entity } from "./entity.ts";

/** The parts of a game a cellapp runs. */
export interface CellGameParts {
  registry: EntityRegistry;
  scripts: Readonly<Record<string, CellScriptClass>>;
}

/** Swaps `next` into `host` and every entity of `cells`. */
export function swapCellGame(host: CellHost, cells: Iterable<Cell>, next: CellGameParts): void {
  host.registry.adopt(next.registry);
  host.scripts = next.scripts;
  for (const cell of cells) {
    for (const e of cell.ghosts.values()) follow(e);
    for (const e of cell.entities.values()) {
      follow(e);
      cell.rebindScript(e);
    }
  }
}

function follow(e: Entity): void {
  e.container.upgrade();
  const stamps = e.history?.propStamps;
  while (stamps && stamps.length < e.type.properties.length) stamps.push(1);
}
