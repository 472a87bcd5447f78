/**
 * The shutdown of a space (docs/architecture.md, "Spaces and cells"), as one cell of it sees it: an emptied space with
 * a single cell (not the default space) asks the cellappmgr for its shutdown; when told to, the cell waits for
 * in-flight work to settle, then every real hears onSpaceGone and is destroyed, and the cell goes.
 */
import type { CellHost } from "./cell_host.ts";
import type { Entity } from "./entity.ts";
import { callScript, type ScriptCell } from "./script_calls.ts";

/** A shutdown request is acted on after this delay, so in-flight work settles. */
const SHUTDOWN_DELAY_MS = 1000;

/** What the shutdown needs of its cell. */
export interface ShutdownCell extends ScriptCell {
  readonly cellId: number;
  readonly isDefault: boolean;
  readonly entities: ReadonlyMap<number, Entity>;
  readonly hasHadEntities: boolean;
  /** Whether the space's tree has this cell. */
  readonly inTree: boolean;
  /** Every cell of the space. */
  readonly layout: readonly unknown[];
  readonly host: Pick<CellHost, "log" | "scripts" | "requestShutDown" | "cellGone">;
  destroyEntity(e: Entity, reason: string): void;
}

/** The shutdown of one cell's space. */
export class SpaceShutdown {
  readonly #cell: ShutdownCell;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #started = false;

  constructor(cell: ShutdownCell) {
    this.#cell = cell;
  }

  /** Whether the cellappmgr has shut the space down (the cell goes once the delay is over). */
  get started(): boolean {
    return this.#started;
  }

  /** Asks for this space to shut down (destroySpace, or an emptied single-cell space). */
  request(why: string): void {
    const cell = this.#cell;
    if (cell.isDefault) throw new Error(`space ${cell.spaceId} is the default space, which never shuts down`);
    cell.host.requestShutDown(cell.spaceId, why);
  }

  /**
   * Asks again for the shutdown of an emptied space, after a report: the cellappmgr refuses while it has not yet
   * heard that the space ever had entities.
   */
  recheck(): void {
    if (this.#mayShutDown()) this.#cell.host.requestShutDown(this.#cell.spaceId, "the space is empty");
  }

  /** A real left the cell: asks for the shutdown if that emptied the space. */
  realLeft(): void {
    if (!this.#mayShutDown()) return;
    const cell = this.#cell;
    cell.host.log.info(`space ${cell.spaceId} is now empty; asking for its shutdown`);
    cell.host.requestShutDown(cell.spaceId, "the space is empty");
  }

  /** The condition: an emptied space with one cell that is not the default space. */
  #mayShutDown(): boolean {
    const cell = this.#cell;
    return cell.entities.size === 0 && !this.started && !cell.isDefault && cell.hasHadEntities &&
      cell.inTree && cell.layout.length === 1;
  }

  /** The cellappmgr shuts the space down: acted on after a delay, repeated requests ignored. */
  start(): void {
    const cell = this.#cell;
    if (this.#started) {
      cell.host.log.info(`space ${cell.spaceId} is already shutting down`);
      return;
    }
    this.#started = true;
    this.#timer = setTimeout(() => this.#onSpaceGone(), SHUTDOWN_DELAY_MS);
  }

  #onSpaceGone(): void {
    const cell = this.#cell;
    for (const e of [...cell.entities.values()]) {
      if (e.destroyed) continue;
      callScript(cell, e, "onSpaceGone");
      if (!e.destroyed && e.cell === (cell as object)) cell.destroyEntity(e, `space ${cell.spaceId} shut down`);
    }
    cell.host.log.info(`space ${cell.spaceId}: cell destroyed`);
    cell.host.cellGone(cell.spaceId, cell.cellId);
  }

  /** Stops the delay's timer (when the cellapp stops). */
  dispose(): void {
    clearTimeout(this.#timer);
  }
}
