/** What the witness needs of the cell that holds its entity: the time, and the entities it can see there. */
import type { Entity, EntityWitness } from "../entity.ts";
import type { WitnessOptions } from "./witness_options.ts";

/** The cell of a witness's entity, as far as the witness uses it. */
export interface WitnessCell {
  /** The cell's clock (ms), advanced by ticks. */
  readonly time: number;
  /** Reals of the cell. */
  readonly entities: ReadonlyMap<number, Entity>;
  /** Ghosts of neighbours' reals held by the cell. */
  readonly ghosts: ReadonlyMap<number, Entity>;
  /** The space's ghost radius in force, which caps its witnesses' AoI radius (core/space_settings.ts). */
  readonly ghostRadius?: number;
  /** The witnesses of the cell's reals (a Witness adds itself, and takes itself out when it ends). */
  readonly witnesses: Set<EntityWitness>;
  /** The space's AoI defaults for witnesses created here (configureSpaceAoI, applySpaceSettings). */
  aoiOptions: WitnessOptions;
}
