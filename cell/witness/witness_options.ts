/**
 * Witness settings: per witness, per space (configureSpaceAoI), and the defaults; the cell's registries of
 * witnesses; and the script-callback helper the witness shares with nothing else in the cell.
 */
import type { WitnessCell } from "./host.ts";
import type { Entity } from "../entity.ts";
import { enterLoop, leaveEntity, switchEntity } from "../load/entity_load.ts";
import { newGeneration, passToken } from "./entity_rows.ts";

/** Witness settings; unset ones come from the space's (configureSpaceAoI), then from WITNESS_DEFAULTS. */
export interface WitnessOptions {
  /** Half-side of the AoI square, metres. */
  aoiRadius?: number;
  /** Entities enter within aoiRadius and leave beyond aoiRadius + hysteresis. */
  hysteresis?: number;
  /** Bytes the client may be sent per tick (own-client messages included). */
  bytesPerTick?: number;
  /** BigWorld's MAX_PRIORITY_DELTA: a tick goes no further than this past the first priority. */
  maxPriorityDelta?: number;
  /** Priority delta = (distance * distanceWeighting + 1) * weighting. */
  distanceWeighting?: number;
  weighting?: number;
  /** A cache's delta may grow by at most this factor per send (so a jump in distance can't starve it). */
  deltaGrowthThrottle?: number;
  /** How long a cache waits for the client's request before it is created with everything. */
  requestTimeoutMs?: number;
  /** The reference position follows the witness once it is this far off on an axis. */
  referenceThreshold?: number;
  /** Scale of packed positions; by default the AoI (plus hysteresis) just fits. */
  packedScale?: number;
  /** Id aliases available (at most 255). */
  maxAliases?: number;
  /** Event history horizon of the entities seen, ms (60 s, as in BigWorld). */
  historyHorizonMs?: number;
  /** Told of bad client input (cheating or a broken client): what it was. */
  onBadInput?: (what: string) => void;
}

/** Defaults: BigWorld's (AoI 500 m, update scheme distance/5 + 1, sends within ~45 m every tick). */
export const WITNESS_DEFAULTS = {
  aoiRadius: 500,
  hysteresis: 5,
  bytesPerTick: 1400,
  maxPriorityDelta: 10,
  distanceWeighting: 0.2,
  weighting: 1,
  deltaGrowthThrottle: 2,
  requestTimeoutMs: 5000,
  referenceThreshold: 1,
  maxAliases: 255,
  historyHorizonMs: 60_000,
} as const;

/** Per-cell (space) defaults set with configureSpaceAoI. */
export const spaceOptions: WeakMap<WitnessCell, WitnessOptions> = new WeakMap();

/** Sets a space's (cell's) AoI defaults for witnesses created afterwards. */
export function configureSpaceAoI(cell: WitnessCell, opts: WitnessOptions): void {
  spaceOptions.set(cell, { ...spaceOptions.get(cell), ...opts });
}

/** What the cell's registries need of a witness. */
export interface Updatable {
  /** The entity whose client it serves: its update is charged to it (cell/load/). */
  readonly entity: Entity;
  update(): void;
}

/** The witnesses of each cell, and the witness of each entity (a Witness registers itself). */
export const cellWitnesses: WeakMap<WitnessCell, Set<Updatable>> = new WeakMap();
export const entityWitness: WeakMap<Entity, Updatable> = new WeakMap();

/** Runs every witness of a cell once, each charged to its entity; the cell calls it at the end of each tick. */
export function updateWitnesses(cell: WitnessCell): void {
  const set = cellWitnesses.get(cell);
  if (!set || set.size === 0) return;
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

/** Calls a script callback the way the cell does: errors are logged with the entity, never thrown. */
export function callScript(e: Entity, name: string, ...args: unknown[]): void {
  e.cell.callScript(e, name, ...args);
  // The script may have moved or destroyed entities, in the middle of a pass over the witnesses.
  newGeneration();
}
