/**
 * A base script's hold on where its cell entity is (docs/game.md, "Instances"): createCellEntity near an entity or in
 * a space, createInNewSpace, and a teleport of the cell entity, each checked here first so that a script hears what
 * is wrong with its input before anything is asked of the cellappmgr or the cellapps.
 */
import { errorText } from "../../core/errors.ts";
import type { CellEntityPlace, CellEntityPlaced, NewSpaceOptions } from "../../core/base_script.ts";
import type { Vec3 } from "../../core/geo/vec3.ts";
import { MAX_COORD, withinWorld } from "../../core/geo/mod.ts";
import { newSpaceError, type NewSpaceRequest } from "../../core/new_space.ts";
import { BaseScriptMsg, NOT_TELEPORTED, RemoteError } from "../../core/wire/mod.ts";
import type { ScriptedBase, Tuple3 } from "./scripted_base.ts";

/** A teleport the real was not in place to take (it was changing cell) is asked again, this often, this far apart. */
const TELEPORT_TRIES = 5;
const TELEPORT_RETRY_MS = 200;

/** `v` as a tuple, or throws naming `what` of `who`. */
function tuple3(v: Vec3 | undefined, who: string, what: string): Tuple3 {
  const t: Tuple3 = [v?.x as number, v?.y as number, v?.z as number];
  if (!t.every(Number.isFinite) || !withinWorld(t)) {
    throw new RangeError(
      `${who}: ${what} must be {x, y, z}, finite and within ±${MAX_COORD} m; got ${JSON.stringify(v)}`,
    );
  }
  return t;
}

function vec3Of(t: Tuple3): Vec3 {
  return { x: t[0], y: t[1], z: t[2] };
}

/** Cell placement from base scripts: createCellEntity, createInNewSpace, destroyCellEntity and teleport. */
export class CellPlacement {
  constructor(private readonly p: ScriptedBase) {}

  get #who(): string {
    return `${this.p.type.name} ${this.p.id}`;
  }

  async create(where: CellEntityPlace): Promise<CellEntityPlaced> {
    const who = `${this.#who}.createCellEntity`;
    if (where === null || typeof where !== "object") {
      throw new TypeError(`${who}: expected { near } or { spaceId, position }`);
    }
    const direction = where.direction ? tuple3(where.direction, who, "direction") : null;
    if ("near" in where) {
      const near = typeof where.near === "number" ? where.near : where.near?.id;
      if (!Number.isInteger(near) || near <= 0) throw new TypeError(`${who}: near ${String(near)} is not an entity id`);
      if (near === this.p.id) throw new Error(`${who}: an entity cannot be created near itself`);
      const position = where.position ? tuple3(where.position, who, "position") : [0, 0, 0] as Tuple3;
      return this.#placed(
        await this.p.placeCell(0, position, direction, { near, positionGiven: !!where.position, newSpace: null }),
      );
    }
    const spaceId = (where as { spaceId: unknown }).spaceId;
    if (!Number.isInteger(spaceId) || (spaceId as number) < 1 || (spaceId as number) >= 2 ** 32) {
      throw new TypeError(`${who}: spaceId ${String(spaceId)} is not a space id`);
    }
    const position = tuple3(where.position, who, "position");
    return this.#placed(
      await this.p.placeCell(spaceId as number, position, direction, {
        near: null,
        positionGiven: true,
        newSpace: null,
      }),
    );
  }

  async createInNewSpace(o: NewSpaceOptions): Promise<CellEntityPlaced> {
    const who = `${this.#who}.createInNewSpace`;
    if (o === null || typeof o !== "object") throw new TypeError(`${who}: expected { size, cells?, preferredHost? }`);
    const size = o.size;
    const [width, depth] = typeof size === "number" ? [size, size] : [size?.width, size?.depth];
    const req: NewSpaceRequest = {
      width: width as number,
      depth: depth as number,
      cells: o.cells ?? 1,
      preferredHost: o.preferredHost ?? null,
      geometry: o.geometry ?? null,
    };
    const why = newSpaceError(req);
    if (why) throw new RangeError(`${who}: ${why}`);
    const position = o.position ? tuple3(o.position, who, "position") : [0, 0, 0] as Tuple3;
    const direction = o.direction ? tuple3(o.direction, who, "direction") : null;
    return this.#placed(
      await this.p.placeCell(0, position, direction, { near: null, positionGiven: !!o.position, newSpace: req }),
    );
  }

  async teleport(position: Vec3, spaceId?: number): Promise<void> {
    const who = `${this.#who}.teleport`;
    if (!this.p.type.hasCell) throw new Error(`${who}: it has no cell part (its type has no cell)`);
    const to = tuple3(position, who, "position");
    const space = spaceId ?? this.p.spaceId;
    if (!Number.isInteger(space) || space < 1 || space >= 2 ** 32) throw new TypeError(`${who}: no space ${space}`);
    for (let attempt = 1;; attempt++) {
      if (this.p.cellState !== "live") throw new Error(`${who}: there is no cell entity now (${this.p.cellState})`);
      try {
        return await this.p.routeRequest(BaseScriptMsg.cellTeleport, this.p.id, space, to);
      } catch (e) {
        // The real was moving to another cell as the request came: the route follows it, so ask again there.
        if (e instanceof RemoteError && e.message.startsWith(NOT_TELEPORTED) && attempt < TELEPORT_TRIES) {
          await new Promise((r) => setTimeout(r, TELEPORT_RETRY_MS));
          continue;
        }
        if (e instanceof RemoteError) throw new Error(`${who}: ${e.message}`, { cause: e });
        throw new Error(`${who}: its cellapp did not answer (${errorText(e)})`, { cause: e });
      }
    }
  }

  #placed(r: { spaceId: number; position: Tuple3 }): CellEntityPlaced {
    return { spaceId: r.spaceId, position: vec3Of(r.position) };
  }
}
