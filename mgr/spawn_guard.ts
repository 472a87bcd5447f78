/**
 * What an admin spawn must pass before anything is made: initial property
 * values checked against the definitions, the spawn limit per request and the
 * entity limit of the cluster; and what a game's spaceCreated hook puts into
 * a new space.
 */
import { errorText } from "../core/errors.ts";
import { type EntityRegistry, PropertyContainer } from "../core/def/mod.ts";
import type { Rect } from "../core/geo/mod.ts";
import type { Logger } from "../core/log.ts";
import type { SpaceCreatedHook, SpaceEntities } from "../core/game.ts";
import { RequestError } from "../core/views.ts";

/** Entities an admin request asks for. */
export type SpawnEntries = readonly { type: string; count: number; props?: Record<string, unknown> }[];

/** The checks and the count of entities being spawned, which the entity limit counts until cells report them. */
export class SpawnGuard {
  #underWay = 0;

  constructor(
    private readonly o: {
      registry: EntityRegistry;
      /** Real entities the cluster holds now, as its cells reported them. */
      held: () => number;
      /** Most entities one request may create (`--spawn-limit`). */
      spawnLimit: number;
      /** Most entities the cluster may hold after a request (`--entity-limit`). */
      entityLimit: number;
    },
  ) {}

  /** Runs `spawn` once `entries` pass the checks; a failed check is the caller's 400 or 409, naming the field. */
  async run<T>(entries: SpawnEntries, spawn: () => Promise<T>): Promise<T> {
    entries.forEach((e, i) => {
      const type = this.o.registry.find(e.type);
      if (!type || !e.props) return;
      const scratch = new PropertyContainer(type, "cell");
      for (const [name, value] of Object.entries(e.props)) {
        try {
          scratch.set(name, value);
        } catch (err) {
          throw new RequestError("bad_request", `entities.${i}.props.${name}: ${errorText(err)}`, { cause: err });
        }
      }
    });
    const count = entries.reduce((n, e) => n + e.count, 0);
    if (count > this.o.spawnLimit) {
      throw new RequestError(
        "bad_request",
        `entities: ${count} in one request is more than the spawn limit of ${this.o.spawnLimit} (--spawn-limit)`,
      );
    }
    const held = this.o.held() + this.#underWay;
    if (held + count > this.o.entityLimit) {
      throw new RequestError(
        "conflict",
        `entities: the cluster holds ${held} entities (with spawns under way); ${count} more would pass the ` +
          `entity limit of ${this.o.entityLimit} (--entity-limit)`,
      );
    }
    this.#underWay += count;
    try {
      return await spawn();
    } finally {
      // From now on the spaces count them (spawned and not yet reported, then reported).
      this.#underWay -= count;
    }
  }
}

/** What the game's spaceCreated hook puts in a new space; nothing (logged) when it fails or names unknown types. */
export function gameEntities(
  hook: SpaceCreatedHook | undefined,
  registry: EntityRegistry,
  log: Logger,
  space: { bounds: Rect; isDefault: boolean; npcs: number },
): SpaceEntities[] {
  if (!hook) return [];
  try {
    const out = hook({ bounds: { ...space.bounds }, isDefault: space.isDefault, npcs: space.npcs });
    for (const e of out) {
      const t = registry.find(e.type);
      if (!t) {
        throw new Error(`${e.type} is not a type of the game (known: ${registry.types.map((x) => x.name).join(", ")})`);
      }
      if (!t.hasCell) throw new Error(`${e.type} is not a type with a cell part`);
      if (!(Number.isInteger(e.count) && e.count >= 1)) throw new Error(`${e.type}: count ${e.count} is not >= 1`);
    }
    return out;
  } catch (e) {
    log.error(`the game's spaceCreated hook failed; the new space starts empty: ${errorText(e)}`);
    return [];
  }
}
