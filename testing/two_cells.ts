/**
 * Cells of one space in one process, linked by an in-memory route (route.ts) that delivers messages in order after
 * every cell ticked, or through seeded chaos (delays, reordering across links, duplicates). `twoCellsOf`: two cells split at x = 100 (bounds 0..200 × 0..100), each on its own "cellapp" ("a" is
 * cellapp 1 with cell 1, "b" cellapp 2 with cell 2). `cellsOf`: any tree, several cells per "cellapp"; messages are
 * routed to the cell they name, by the cellapp's address and the cell id.
 */
import { Cell } from "../cell/cell.ts";
import type { CellHost } from "../cell/cell_host.ts";
import type { Entity } from "../cell/entity.ts";
import { GHOST_DEFAULTS, type GhostConfig } from "../cell/borders/ghosts.ts";
import type { EntityRegistry } from "../core/def/mod.ts";
import { type BspNode, cellRects } from "../core/geo/mod.ts";
import { rectFromArray } from "../core/geo/mod.ts";
import type { CellScriptClass } from "../core/script.ts";
import {
  CellMsg,
  ChannelClosedError,
  type GhostOp,
  type MessageDef,
  type SpaceGeometry,
  type SpawnRequest,
} from "../core/wire/mod.ts";
import { spawnInCell } from "../cell/create_entity.ts";
import { memoryLogger } from "./log.ts";
import { type ChaosOptions, Route } from "./route.ts";
import { NavMeshes } from "../cell/nav/mod.ts";

/** What the cells run, and how their route behaves. */
export interface TwoCellOptions {
  registry: EntityRegistry;
  scripts?: Record<string, unknown>;
  cfg?: Partial<GhostConfig>;
  /** Drops a message (by name) when it returns true; a dropped request is never answered. */
  drop?: (def: string, args: unknown[]) => boolean;
  /**
   * Loses the answer to a request (by name) when it returns true: the request is carried out, and the asker gets the
   * error of a channel closed before the answer came.
   */
  loseAnswer?: (def: string, args: unknown[]) => boolean;
  /** Where a witness restored on a cell sends its client's frames (the cellapp's clientSink). */
  clientSink?: (e: Entity) => ((frame: Uint8Array) => void) | undefined;
  /** Route the messages through seeded chaos instead of in order. */
  chaos?: ChaosOptions;
  /** The space's navigation geometry file (cell/nav/); its mesh must be loaded into `navMeshes` before it is used. */
  navGeometry?: string;
  /** The navigation meshes every cell shares (default a new, empty cache). */
  navMeshes?: NavMeshes;
}

/** The two-cell harness. */
export interface TwoCells {
  a: Cell;
  b: Cell;
  /** Ticks both cells `n` times, delivering the messages after each tick. */
  tick(n?: number): Promise<void>;
  /** Delivers the messages sent so far, then lets replies settle. */
  flush(): Promise<void>;
  log: ReturnType<typeof memoryLogger>;
  failOffloads(v: boolean): void;
}

/** The many-cell harness. */
export interface ManyCells {
  /** Every cell, in the tree's order (left to right). */
  cells: Cell[];
  /** The cell with id `id`. */
  cell(id: number): Cell;
  /** Ticks every cell `n` times, delivering the messages after each tick (through chaos: those due). */
  tick(n?: number): Promise<void>;
  /** Delivers the messages sent so far, then lets replies settle. */
  flush(): Promise<void>;
  log: ReturnType<typeof memoryLogger>;
  failOffloads(v: boolean): void;
  /** Every message delivered so far, as [name, from address, to address]. */
  delivered: [string, string, string][];
  /**
   * "Cellapp" `n` dies (kill -9): its cells stop ticking and drop out of `cells`; what is sent to it from now on is
   * lost (a request fails), what it sent before still arrives.
   */
  kill(cellapp: number): void;
  /** The cellappmgr's new tree reaches every live cell (updateGeometry), with the addresses of its cellapps. */
  setTree(tree: BspNode): void;
  /** The ids of the cells that removed themselves (CellHost.cellGone), in order: they drop out of `cells`. */
  gone: number[];
}

/** The address of "cellapp" `n` in these harnesses: "a" for 1, "b" for 2, ... */
export function addressOf(cellapp: number): string {
  return String.fromCharCode(96 + cellapp);
}

/** Builds the two cells. */
export function twoCellsOf(opts: TwoCellOptions): TwoCells {
  const tree: BspNode = {
    axis: "x",
    at: 100,
    left: { cell: { id: 1, cellapp: 1 } },
    right: { cell: { id: 2, cellapp: 2 } },
  };
  const h = cellsOf(opts, [0, 0, 200, 100], tree);
  return { a: h.cell(1), b: h.cell(2), tick: h.tick, flush: h.flush, log: h.log, failOffloads: h.failOffloads };
}

/** Builds a cell for every leaf of `tree` over `bounds`, on the "cellapps" the leaves name. */
export function cellsOf(opts: TwoCellOptions, bounds: SpaceGeometry["bounds"], tree: BspNode): ManyCells {
  const { registry, cfg = {}, drop = () => false } = opts;
  const route = new Route(opts.chaos);
  const leaves = cellRects(tree, rectFromArray(bounds));
  const apps = [...new Set(leaves.map((c) => c.cellapp))];
  const geometry: SpaceGeometry = {
    spaceId: 9,
    bounds,
    tree,
    isDefault: false,
    cellapps: apps.map((n) => [n, addressOf(n)]),
    ...(opts.navGeometry ? { navGeometry: opts.navGeometry } : {}),
  };
  const navMeshes = opts.navMeshes ?? new NavMeshes();
  const byKey = new Map<string, Cell>();
  let next = 1;
  const log = memoryLogger();
  let failOffload = false;
  const dead = new Set<string>();
  const gone: number[] = [];
  const find = (address: string, cellId: number): Cell => {
    const cell = byKey.get(`${address}/${cellId}`);
    if (!cell) throw new NoCell(`no cell ${cellId} at ${address}`);
    return cell;
  };
  const deliver = (address: string, def: MessageDef, args: unknown[]): unknown => {
    switch (def) {
      case CellMsg.createGhost: {
        const state = args[0] as { cellId: number };
        return find(address, state.cellId).borders.createGhost(state as never);
      }
      case CellMsg.ghostSync:
        return find(address, args[1] as number).borders.receiveGhostSync(
          args[2] as number,
          args[3] as number,
          args[4] as GhostOp[],
        );
      case CellMsg.deleteGhost:
        return find(address, args[1] as number).borders.deleteGhost(args[2] as number, args[3] as number);
      case CellMsg.ghostSeq:
        return find(address, args[1] as number).borders.receiveGhostSeq(
          args[2] as number,
          args[3] as number,
          args[4] as number,
        );
      case CellMsg.handOverWrites:
        return find(address, args[1] as number).borders.receiveHandOverWrites(args[2] as number, args[3] as never);
      case CellMsg.ghostResync:
        return find(address, args[1] as number).borders.resyncGhost(args[2] as number, args[3] as number);
      case CellMsg.offload: {
        if (failOffload) throw new Error("the target cellapp is gone");
        const state = args[0] as { cellId: number };
        const taken = find(address, state.cellId).borders.receiveOffload(state as never);
        return taken ? taken.then(() => true) : true;
      }
      case CellMsg.entityCall:
        return find(address, args[1] as number).runEntityCall(
          args[2] as number,
          args[3] as number,
          args[4] as string,
          args[5] as unknown[],
        );
      case CellMsg.teleportIn: {
        const state = args[0] as { cellId: number };
        find(address, state.cellId).receiveTeleport(state as never);
        return true;
      }
      case CellMsg.spawn: {
        const req = args[0] as SpawnRequest;
        return spawnInCell(find(address, req.cellId!), req);
      }
      case CellMsg.realMoved:
        return find(address, args[1] as number).borders.realMoved(args[2] as number, {
          cellapp: args[3] as number,
          address: args[4] as string,
          cell: args[5] as number,
        }, args[6] as number);
    }
    throw new Error(`unexpected ${def.name}`);
  };
  const host = (address: string): CellHost => ({
    registry,
    scripts: (opts.scripts ?? {}) as Record<string, CellScriptClass>,
    clientSink: opts.clientSink ?? (() => undefined),
    log,
    budgetMs: 100,
    navMeshes,
    newEntityId: () => next++,
    requestShutDown: () => {},
    // A cell that removed itself: as on a cellapp, one-way messages to it are dropped and requests fail.
    cellGone: (_spaceId, cellId) => {
      const i = cells.findIndex((c) => c.cellId === cellId && addressOf(c.cellappId) === address);
      if (i >= 0) cells.splice(i, 1);
      byKey.delete(`${address}/${cellId}`);
      gone.push(cellId);
    },
    cellEntityDestroyed: () => {},
    // No baseapp and no cellappmgr here: what would go to them is dropped, and what asks them is refused.
    cellEntityMoved: () => {},
    entityTeleported: () => {},
    clientError: () => {},
    setSpaceSettings: () => Promise.reject(new Error("this cell has no cellappmgr")),
    // Thrown at once, as createEntity refuses at once what it cannot do.
    findCell: (spaceId) => {
      throw new Error(`this harness has no cellappmgr: it cannot reach space ${spaceId}`);
    },
    bases: {
      call: (e, method) =>
        Promise.reject(new Error(`${e.type.name} ${e.id}.base.${method}: this cell reaches no baseapp`)),
      createBaseAnywhere: (typeName) =>
        Promise.reject(new Error(`createBaseAnywhere ${typeName}: this cell reaches no baseapp`)),
      clientMessage: (player, method) =>
        Promise.reject(new Error(`clientOf(${player.id}).${method}: this cell reaches no baseapp`)),
    },
    ghosting: {
      config: { ...GHOST_DEFAULTS, ghostRadius: 20, checkMs: 100, minLifetimeMs: 300, ...cfg },
      address,
      // Every message goes through the route one by one, never as a record of a ghostSyncs frame.
      ghostRecord: () => null,
      send: (to, def, ...args) => {
        if (drop(def.name, args)) return;
        const copy = structuredClone(args);
        route.send(def.name, address, to, () => {
          if (dead.has(to)) return;
          try {
            deliver(to, def as MessageDef, structuredClone(copy));
          } catch (e) {
            if (!(e instanceof NoCell)) throw e;
          }
        });
      },
      ask: (to, _t, def, ...args) => {
        if (drop(def.name, args)) return new Promise(() => {});
        const copy = structuredClone(args);
        const asked = route.ask(def.name, address, to, () => {
          if (dead.has(to)) throw new Error(`cellapp at ${to} is gone`);
          return deliver(to, def as MessageDef, copy) as never;
        });
        if (!opts.loseAnswer?.(def.name, args)) return asked;
        const lost = () => {
          throw new ChannelClosedError(`channel to ${to} closed: no traffic (missed heartbeats)`);
        };
        return asked.then(lost, lost);
      },
    },
  });
  const hosts = new Map(apps.map((n) => [n, host(addressOf(n))]));
  const cells = leaves.map((c) => {
    const cell = new Cell(hosts.get(c.cellapp)!, geometry, c.cellapp, c.id);
    byKey.set(`${addressOf(c.cellapp)}/${c.id}`, cell);
    return cell;
  });
  const flush = (): Promise<void> => route.flush();
  /** One tick of every cell, then the messages they sent (through chaos: those due). */
  const tick = async (n = 1): Promise<void> => {
    for (let i = 0; i < n; i++) {
      for (const c of [...cells]) c.tick(100); // a copy: a cell may remove itself as it ticks
      await route.round();
    }
  };
  const cell = (id: number): Cell => {
    const c = cells.find((x) => x.cellId === id);
    if (!c) throw new Error(`no cell ${id}`);
    return c;
  };
  return {
    cells,
    cell,
    tick,
    flush,
    log,
    failOffloads: (v: boolean) => (failOffload = v),
    delivered: route.delivered,
    gone,
    kill: (cellapp: number) => {
      dead.add(addressOf(cellapp));
      for (let i = cells.length - 1; i >= 0; i--) if (cells[i].cellappId === cellapp) cells.splice(i, 1);
    },
    setTree: (next: BspNode) => {
      const live = [...new Set(cellRects(next, rectFromArray(bounds)).map((c) => c.cellapp))];
      const g: SpaceGeometry = { ...geometry, tree: next, cellapps: live.map((n) => [n, addressOf(n)]) };
      for (const c of cells) c.updateGeometry(g);
    },
  };
}

/** A message named a cell its cellapp does not have (any more). */
class NoCell extends Error {}
