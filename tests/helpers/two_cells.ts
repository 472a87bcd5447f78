/**
 * Two cells of one space, split at x = 100 (bounds 0..200 × 0..100), each on its own "cellapp" ("a" is cellapp 1,
 * "b" cellapp 2), linked by an in-memory route that delivers messages in order after both cells ticked.
 */
import { Cell, type CellHost } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import { GHOST_DEFAULTS, type GhostConfig } from "../../cell/ghosts.ts";
import type { EntityRegistry } from "../../core/def/mod.ts";
import type { CellScriptClass } from "../../core/script.ts";
import { CellMsg, type GhostOp, type MessageDef, type SpaceGeometry } from "../../core/wire/mod.ts";
import { memoryLogger } from "./log.ts";

/** What the two cells run, and how their route behaves. */
export interface TwoCellOptions {
  registry: EntityRegistry;
  scripts?: Record<string, unknown>;
  cfg?: Partial<GhostConfig>;
  /** Drops a message (by name) when it returns true. */
  drop?: (def: string, args: unknown[]) => boolean;
  /** Where a witness restored on a cell sends its client's frames (the cellapp's clientSink). */
  clientSink?: (e: Entity) => ((frame: Uint8Array) => void) | undefined;
}

/** The harness. */
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

/** Builds the two cells. */
export function twoCellsOf(opts: TwoCellOptions): TwoCells {
  const { registry, cfg = {}, drop = () => false } = opts;
  const cells = new Map<string, Cell>();
  const geometry: SpaceGeometry = {
    spaceId: 9,
    bounds: [0, 0, 200, 100],
    tree: { axis: "x", at: 100, left: { cell: { cellapp: 1 } }, right: { cell: { cellapp: 2 } } },
    isDefault: false,
    cellapps: [[1, "a"], [2, "b"]],
  };
  let next = 1;
  const log = memoryLogger();
  const queue: (() => void)[] = [];
  let failOffload = false;
  const deliver = (address: string, def: MessageDef, args: unknown[]) => {
    const cell = cells.get(address)!;
    switch (def) {
      case CellMsg.createGhost:
        return cell.createGhost(args[0] as never);
      case CellMsg.ghostSync:
        return cell.receiveGhostSync(args[1] as number, args[2] as number, args[3] as GhostOp[]);
      case CellMsg.deleteGhost:
        return cell.deleteGhost(args[1] as number);
      case CellMsg.ghostResync:
        return cell.resyncGhost(args[1] as number, args[2] as number);
      case CellMsg.offload:
        if (failOffload) throw new Error("the target cellapp is gone");
        cell.receiveOffload(args[0] as never);
        return true;
      case CellMsg.entityCall:
        return cell.runEntityCall(args[1] as number, args[2] as number, args[3] as string, args[4] as unknown[]);
      case CellMsg.teleportIn:
        cell.receiveTeleport(args[0] as never);
        return true;
      case CellMsg.realMoved:
        return cell.realMoved(args[1] as number, args[2] as number, args[3] as string);
    }
    throw new Error(`unexpected ${def.name}`);
  };
  const host = (address: string): CellHost => ({
    registry,
    scripts: (opts.scripts ?? {}) as Record<string, CellScriptClass>,
    clientSink: opts.clientSink,
    log,
    budgetMs: 100,
    newEntityId: () => next++,
    requestShutDown: () => {},
    cellGone: () => {},
    cellEntityDestroyed: () => {},
    ghosting: {
      config: { ...GHOST_DEFAULTS, ghostRadius: 20, checkMs: 100, minLifetimeMs: 300, ...cfg },
      address,
      send: (to, def, ...args) => {
        if (!drop(def.name, args)) queue.push(() => deliver(to, def as MessageDef, structuredClone(args)));
      },
      ask: (to, _t, def, ...args) => {
        return new Promise((resolve, reject) =>
          queue.push(() => {
            try {
              resolve(deliver(to, def as MessageDef, structuredClone(args)) as never);
            } catch (e) {
              reject(e);
            }
          })
        );
      },
    },
  });
  const a = new Cell(host("a"), geometry, 1);
  const b = new Cell(host("b"), geometry, 2);
  cells.set("a", a).set("b", b);
  const flush = async () => {
    while (queue.length) queue.shift()!();
    await new Promise((r) => setTimeout(r, 0)); // let replies settle, as a real event loop would
  };
  /** One tick of both cells, then the messages they sent, in order. */
  const tick = async (n = 1) => {
    for (let i = 0; i < n; i++) {
      a.tick(100);
      b.tick(100);
      await flush();
    }
  };
  return { a, b, tick, flush, log, failOffloads: (v: boolean) => (failOffload = v) };
}
