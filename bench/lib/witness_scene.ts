/**
 * The scene of `bench witness`: Avatars walking at random in one cell, the first of them with a witness whose frames
 * go to a sink the benchmark gives. Built from a set of modules, so that `bench witness_ab` can build it from this
 * checkout and from another one in the same process.
 */
import type { Logger } from "../../core/log.ts";
import type { EntityRegistry } from "../../core/def/mod.ts";
import type { Cell } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import type { Witness } from "../../cell/witness/witness.ts";
import type { ClientWorld } from "../../client/world.ts";
import type { loneCell } from "../../testing/lone_cell.ts";

/** The tick, ms. */
export const DT = 100;

/** What a scene is built from: one checkout's witness, client model, entity types and lone cell. */
export interface SceneModules {
  Witness: typeof Witness;
  ClientWorld: typeof ClientWorld;
  registry: EntityRegistry;
  loneCell: typeof loneCell;
}

/** The scene's size and pace. */
export interface SceneOptions {
  entities: number;
  witnesses: number;
  /** AoI half-side, m. */
  radius: number;
  /** Side of the square, m. */
  side: number;
  /** Walking speed, m/s. */
  speed: number;
  log: Logger;
}

/** A built scene: step it with `move()` then `cell.tick(DT)`. */
export interface WitnessScene {
  readonly cell: Cell;
  /** The clients' models of what they see, by witness. */
  readonly worlds: ClientWorld[];
  readonly witnesses: Witness[];
  /** One tick's moves: every entity walks on, 2 % of them turn, 1 % change `hp`. */
  move(): void;
}

/** Gets frame `frame` of witness `i`, whose client model is `world`, inside the witness's update. */
export type SceneSink = (i: number, world: ClientWorld, frame: Uint8Array) => void;

/** Builds the scene from `m`; the same options give the same walks and changes (a seeded generator). */
export function buildScene(m: SceneModules, o: SceneOptions, sink: SceneSink): WitnessScene {
  const { side, speed } = o;
  const { cell } = m.loneCell({ registry: m.registry, bounds: [0, 0, side, side], log: o.log });
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const ents: Entity[] = [], heading: number[] = [];
  for (let i = 0; i < o.entities; i++) {
    ents.push(cell.createEntity("Avatar", { x: rnd() * side, y: 0, z: rnd() * side }, { playerName: `p${i}` }));
    heading.push(rnd() * 2 * Math.PI);
  }
  const worlds: ClientWorld[] = [], witnesses: Witness[] = [];
  for (let i = 0; i < o.witnesses; i++) {
    const ref: { w?: Witness } = {};
    const world = new m.ClientWorld(m.registry, { send: (b) => ref.w!.receive(b) });
    world.setPlayer(ents[i].id, ents[i].type);
    worlds.push(world);
    ref.w = new m.Witness(ents[i], { aoiRadius: o.radius, hysteresis: 5 }, (f) => sink(i, world, f));
    witnesses.push(ref.w);
  }
  const step = speed * DT / 1000;
  return {
    cell,
    worlds,
    witnesses,
    move(): void {
      for (let i = 0; i < ents.length; i++) {
        const e = ents[i];
        if (rnd() < 0.02) heading[i] += (rnd() - 0.5) * 2;
        let x = e.x + Math.sin(heading[i]) * step, z = e.z + Math.cos(heading[i]) * step;
        if (x < 0 || x > side || z < 0 || z > side) {
          heading[i] += Math.PI;
          x = Math.min(side, Math.max(0, x));
          z = Math.min(side, Math.max(0, z));
        }
        e.yaw = heading[i];
        cell.moveEntity(e, x, 0, z);
        if (rnd() < 0.01) e.props.hp = Math.floor(rnd() * 100);
      }
    },
  };
}

/** A logger that prints only errors: a benchmark's output is its table. */
export function quietLog(): Logger {
  const quiet = () => {};
  const log: Logger = {
    level: "error",
    debug: quiet,
    info: quiet,
    warn: quiet,
    error: console.error,
    child: () => log,
  };
  return log;
}
