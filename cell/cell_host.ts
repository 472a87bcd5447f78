/** What a cell needs from the cellapp that runs it: its types and scripts, ids, logging, and the cluster beyond. */
import type { ByteWriter, EntityRegistry } from "../core/def/mod.ts";
import type { ErrorCodeValue } from "../core/proto/mod.ts";
import type { Logger } from "../core/log.ts";
import type { CellScriptClass, Vec3 } from "../core/script.ts";
import type { BaseRef } from "../core/base_script.ts";
import type { SpaceSettings, SpaceSettingsView } from "../core/space_settings.ts";
import type { MessageDef } from "../core/wire/mod.ts";
import type { GhostConfig } from "./borders/ghosts.ts";
import type { CellAddress } from "./cell_layout.ts";
import type { Entity } from "./entity.ts";
import type { NavMeshes } from "./nav/mod.ts";

/**
 * What a cell needs from its cellapp. Every member is required: the cellapp (cellapp.ts) has them all, and a cell
 * without a cluster around it gets them from testing/lone_cell.ts, which records what is told and refuses what is asked.
 */
export interface CellHost {
  registry: EntityRegistry;
  scripts: Readonly<Record<string, CellScriptClass>>;
  log: Logger;
  /** A fresh, cluster-unique entity id. */
  newEntityId(): number;
  /** Ghosting between cellapps (and between cells of this cellapp, through its loopback). */
  ghosting: GhostHost;
  /** Asks the cellappmgr to shut the space down. */
  requestShutDown(spaceId: number, why: string): void;
  /** Asks the cellappmgr to change the space's settings; resolves to those in force. */
  setSpaceSettings(spaceId: number, change: SpaceSettings): Promise<SpaceSettingsView>;
  /** The cell `cellId` of the space has finished shutting down and can be dropped. */
  cellGone(spaceId: number, cellId: number): void;
  /** Tells the base of `e` that its cell entity is gone. */
  cellEntityDestroyed(e: Entity, reason: string): void;
  /**
   * Tells the base of `e` that its cell entity now lives on the cellapp at `address`, as epoch `e.epoch + 1`
   * (sent after this cellapp's last frame for its client).
   */
  cellEntityMoved(e: Entity, address: string, spaceId?: number): void;
  /**
   * Tells the base of `e` that `e` was teleported to where it now is (in `spaceId`), after this cellapp's last frame
   * for its client from where it was: the client is told, the base's speed check starts there.
   */
  entityTeleported(e: Entity, spaceId: number, position: Vec3): void;
  /** Where the cell of another space containing (x, z) is (for teleports). */
  findCell(spaceId: number, x: number, z: number): Promise<CellAddress>;
  /** Where a witness restored here sends its client's frames (through the entity's base); none without a base. */
  clientSink(e: Entity): ((frame: Uint8Array) => void) | undefined;
  /** The client of `e` asked for something the cell refused: tell it (an error reply about client message `about`). */
  clientError(e: Entity, code: ErrorCodeValue, about: number, message: string): void;
  budgetMs: number;
  /** The navigation meshes of the cellapp's spaces, made once per geometry file (cell/nav/). */
  navMeshes: NavMeshes;
  /** Base scripts: calls a base method of the base of `e`, and creates base-only entities. */
  bases: CellBases;
}

/** What cell scripts reach of the baseapps through their cellapp. */
export interface CellBases {
  call(e: Entity, method: string, args: unknown[]): Promise<unknown>;
  createBaseAnywhere(typeName: string, props: Record<string, unknown>): Promise<BaseRef>;
  /** Calls client method `method` on the client of `player`, through its base at `player.baseAddress`. */
  clientMessage(player: Entity, method: string, args: unknown[]): Promise<void>;
}

/** What a cell needs to keep ghosts on other cellapps. */
export interface GhostHost {
  config: GhostConfig;
  /** This cellapp's listening address. */
  address: string;
  /** Sends a one-way message to another cellapp by address. */
  send<A extends unknown[]>(address: string, def: MessageDef<A, unknown>, ...args: A): void;
  /** Sends a request to another cellapp by address. */
  ask<A extends unknown[], R>(address: string, timeoutMs: number, def: MessageDef<A, R>, ...args: A): Promise<R>;
  /**
   * The writer to append one ghostSyncs record for the cellapp at `address` to, at once (Channel.record), or null
   * when there is no open channel to it (this cellapp's own address included): then the batch goes as a ghostSync.
   */
  ghostRecord(address: string): ByteWriter | null;
}
