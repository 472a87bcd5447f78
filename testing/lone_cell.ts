/**
 * One cell in this process with nothing beyond it: a `CellHost` whose cellappmgr, baseapps and other cellapps are
 * absent. What the cell tells them is recorded in order (`calls`); what it asks of them is refused with an error
 * that says so. The cell holds its whole space, so it has no neighbour to ghost to or hand over to; its ghost radius
 * is unbounded unless given, so only the space's own settings bound a witness's AoI radius (docs/architecture.md,
 * "Ghosts and hand-overs").
 */
import { Cell } from "../cell/cell.ts";
import type { CellBases, CellHost, GhostHost } from "../cell/cell_host.ts";
import type { CellAddress } from "../cell/cell_layout.ts";
import type { Entity } from "../cell/entity.ts";
import { GHOST_DEFAULTS } from "../cell/borders/ghosts.ts";
import type { ErrorCodeValue } from "../core/proto/mod.ts";
import type { EntityRegistry } from "../core/def/mod.ts";
import type { Logger } from "../core/log.ts";
import type { CellScriptClass, Vec3 } from "../core/script.ts";
import type { SpaceSettings, SpaceSettingsView } from "../core/space_settings.ts";
import type { MessageDef } from "../core/wire/mod.ts";
import { memoryLogger } from "./log.ts";
import { NavMeshes } from "../cell/nav/mod.ts";

/** The address the lone cell's cellapp goes by; no message sent to another address arrives. */
export const LONE_ADDRESS = "lone.cellapp:1";

/** What a lone cell is made of; everything but the registry has a default. */
export interface LoneCellOptions {
  registry: EntityRegistry;
  /** Cell scripts by type name. Default none. */
  scripts?: Readonly<Record<string, unknown>>;
  /** Default 1. */
  spaceId?: number;
  /** The space's bounds [minX, minZ, maxX, maxZ]; the cell holds all of it. Default ±5000 m. */
  bounds?: [number, number, number, number];
  /** Whether the space is the default one. Default: whether spaceId is 1. */
  isDefault?: boolean;
  /** The first entity id handed out; the next ones follow. Default 1. */
  firstId?: number;
  /** Default a memoryLogger(). */
  log?: Logger;
  /** The tick budget. Default 100 ms. */
  budgetMs?: number;
  /** The ghost radius. Default unbounded: a lone cell has no neighbour to ghost to. */
  ghostRadius?: number;
  /** The space's navigation geometry file (cell/nav/); its mesh must be loaded into `navMeshes` before it is used. */
  navGeometry?: string;
  /** The navigation meshes (default a new, empty cache). */
  navMeshes?: NavMeshes;
}

/** One call the cell made of the cluster beyond it: the member's name and its arguments. */
export interface LoneCall {
  what: keyof CellHost | "send" | "ask";
  args: unknown[];
}

/** A `CellHost` for one cell with no cellappmgr, no baseapp and no other cellapp. */
export class LoneCellHost implements CellHost {
  readonly registry: EntityRegistry;
  readonly scripts: Readonly<Record<string, CellScriptClass>>;
  readonly log: Logger;
  readonly budgetMs: number;
  /** Every call the cell made of the cluster beyond it, in order. */
  readonly calls: LoneCall[] = [];
  readonly ghosting: GhostHost;
  readonly bases: CellBases;
  readonly navMeshes: NavMeshes;
  #nextId: number;

  constructor(o: LoneCellOptions) {
    this.registry = o.registry;
    this.scripts = (o.scripts ?? {}) as Readonly<Record<string, CellScriptClass>>;
    this.log = o.log ?? memoryLogger();
    this.budgetMs = o.budgetMs ?? 100;
    this.navMeshes = o.navMeshes ?? new NavMeshes();
    this.#nextId = o.firstId ?? 1;
    const calls = this.calls;
    this.ghosting = {
      config: { ...GHOST_DEFAULTS, ghostRadius: o.ghostRadius ?? Infinity },
      address: LONE_ADDRESS,
      send<A extends unknown[]>(address: string, def: MessageDef<A, unknown>, ...args: A): void {
        calls.push({ what: "send", args: [address, def.name, ...args] });
      },
      ask<A extends unknown[], R>(address: string, _ms: number, def: MessageDef<A, R>, ...args: A): Promise<R> {
        calls.push({ what: "ask", args: [address, def.name, ...args] });
        return Promise.reject(new Error(`${def.name} to ${address}: a lone cell reaches no other cellapp`));
      },
      ghostRecord: () => null,
    };
    this.bases = {
      call: (e, method, args) => {
        calls.push({ what: "bases", args: [e.id, method, ...args] });
        return Promise.reject(new Error(`${e.type.name} ${e.id}.base.${method}: a lone cell reaches no baseapp`));
      },
      createBaseAnywhere: (typeName, props) => {
        calls.push({ what: "bases", args: [typeName, props] });
        return Promise.reject(new Error(`createBaseAnywhere ${typeName}: a lone cell reaches no baseapp`));
      },
      clientMessage: (player, method, args) => {
        calls.push({ what: "bases", args: [player.id, method, ...args] });
        return Promise.reject(new Error(`clientOf(${player.id}).${method}: a lone cell reaches no baseapp`));
      },
    };
  }

  /** The calls made of one member, their arguments in order. */
  callsOf(what: LoneCall["what"]): unknown[][] {
    return this.calls.filter((c) => c.what === what).map((c) => c.args);
  }

  newEntityId(): number {
    return this.#nextId++;
  }

  requestShutDown(spaceId: number, why: string): void {
    this.calls.push({ what: "requestShutDown", args: [spaceId, why] });
  }

  setSpaceSettings(spaceId: number, change: SpaceSettings): Promise<SpaceSettingsView> {
    this.calls.push({ what: "setSpaceSettings", args: [spaceId, change] });
    return Promise.reject(new Error(`space ${spaceId}: a lone cell has no cellappmgr`));
  }

  cellGone(spaceId: number, cellId: number): void {
    this.calls.push({ what: "cellGone", args: [spaceId, cellId] });
  }

  cellEntityDestroyed(e: Entity, reason: string): void {
    this.calls.push({ what: "cellEntityDestroyed", args: [e.id, reason] });
  }

  cellEntityMoved(e: Entity, address: string, spaceId?: number): void {
    this.calls.push({ what: "cellEntityMoved", args: [e.id, address, spaceId] });
  }

  entityTeleported(e: Entity, spaceId: number, position: Vec3): void {
    this.calls.push({ what: "entityTeleported", args: [e.id, spaceId, position] });
  }

  findCell(spaceId: number, x: number, z: number): Promise<CellAddress> {
    this.calls.push({ what: "findCell", args: [spaceId, x, z] });
    return Promise.reject(new Error(`space ${spaceId}: a lone cell has no cellappmgr to find its cells`));
  }

  /** No base: a restored witness has nowhere to send its client's frames. */
  clientSink(_e: Entity): undefined {
    return undefined;
  }

  clientError(e: Entity, code: ErrorCodeValue, about: number, message: string): void {
    this.calls.push({ what: "clientError", args: [e.id, code, about, message] });
  }
}

/** A lone cell and its host. */
export interface LoneCell {
  cell: Cell;
  host: LoneCellHost;
}

/** Makes one cell (cell 1 of cellapp 1) holding the whole of its space, on a `LoneCellHost`. */
export function loneCell(o: LoneCellOptions): LoneCell {
  const host = new LoneCellHost(o);
  const spaceId = o.spaceId ?? 1;
  const cell = new Cell(host, {
    spaceId,
    bounds: o.bounds ?? [-5000, -5000, 5000, 5000],
    tree: { cell: { id: 1, cellapp: 1 } },
    isDefault: o.isDefault ?? spaceId === 1,
    ...(o.navGeometry ? { navGeometry: o.navGeometry } : {}),
  }, 1);
  return { cell, host };
}
