/** A base entity as base scripts see it: what its script, its cell placement and its calls need of it. */
import type { BaseScript } from "../../core/base_script.ts";
import type { EntityType } from "../../core/def/mod.ts";
import type { CellPlaceRequest, MessageDef } from "../../core/wire/mod.ts";
import type { CellState } from "../cell_link/mod.ts";

/** A base entity as its script runs on it (a proxy, or a base-only entity). */
export interface ScriptedBase {
  readonly id: number;
  readonly type: EntityType;
  /** Its script object, or null when its type has none. */
  readonly script: BaseScript | null;
  readonly props: Record<string, unknown>;
  readonly hasClient: boolean;
  readonly loggingOut: boolean;
  readonly cellState: CellState;
  /** The space of its cell entity (while it has one). */
  readonly spaceId: number;
  /** A script places its cell entity (BaseCellPart.place). */
  placeCell(
    spaceId: number,
    position: Tuple3,
    direction: Tuple3 | null,
    place: CellPlaceRequest,
  ): Promise<{ spaceId: number; position: Tuple3 }>;
  /** A script destroys its cell entity (BaseCellPart.destroyByScript). */
  destroyCellByScript(): Promise<void>;
  /** A request to the cellapp of its cell entity, in order with what went there before. */
  routeRequest<A extends unknown[], R>(def: MessageDef<A, R>, ...args: A): Promise<R>;
  callClient(method: string, ...args: unknown[]): void;
  writeToDB(): Promise<void>;
  logout(): Promise<void>;
}

/** A position or direction as the base holds it. */
export type Tuple3 = [number, number, number];
