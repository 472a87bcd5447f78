/** The default space (BigWorld's useDefaultSpace): made once a cellapp is there, and made again when it is lost. */
import { errorText } from "../core/errors.ts";
import type { Rect } from "../core/geo/mod.ts";
import type { Logger } from "../core/log.ts";
import type { SpaceEntities } from "../core/game.ts";
import type { Registry } from "./registry.ts";
import type { Spaces } from "./spaces.ts";
import { DEFAULT_SPACE_ID } from "./space.ts";

/** What making the default space needs of the cellappmgr. */
export interface DefaultSpaceHost {
  readonly spaces: Spaces;
  readonly registry: Registry;
  readonly log: Logger;
  /** Its bounds, and the NPCs asked for in it (`--npcs`, told to the game's spaceCreated hook). */
  readonly bounds: Rect;
  readonly npcs: number;
  /** Whether no space may be made now: the cluster shuts down, or the rejoin window is open. */
  held(): boolean;
  /** What the game puts in a new space (spawn_guard.ts gameEntities). */
  gameEntities(bounds: Rect, isDefault: boolean, npcs: number): SpaceEntities[];
}

/** Makes the default space when it is missing, once at a time. */
export class DefaultSpace {
  /** The default space being made, which cell entities for it wait for. */
  #creating: Promise<void> | null = null;
  /** The default space was lost with a cellapp that had a buddy: made again, its NPCs come back from their backups. */
  #npcsRestored = false;

  constructor(private readonly host: DefaultSpaceHost) {}

  /** The default space was lost with a cellapp that had a buddy: when made again, it gets no new NPCs. */
  lostWithBackups(): void {
    this.#npcsRestored = true;
  }

  /**
   * Creates the default space on the best cellapp once the rejoin window is
   * over and no cellapp reported it (a default space whose cellapp died is kept: see giveCellsToBareSpaces); resolves
   * when it exists (or could not be made, which is logged).
   */
  ensure(): Promise<void> {
    if (this.#creating) return this.#creating;
    if (this.host.held() || this.host.spaces.all.has(DEFAULT_SPACE_ID)) return Promise.resolve();
    if (this.host.registry.withRole("cellapp").length === 0) return Promise.resolve();
    this.#creating = this.#create().finally(() => (this.#creating = null));
    return this.#creating;
  }

  async #create(): Promise<void> {
    const { bounds, npcs, log } = this.host;
    try {
      const restored = this.#npcsRestored;
      this.#npcsRestored = false;
      if (restored) log.info("the default space is made again; its NPCs come back from their backups");
      await this.host.spaces.create({
        bounds,
        cells: 1,
        isDefault: true,
        entities: restored ? [] : this.host.gameEntities(bounds, true, npcs),
      });
    } catch (e) {
      const why = `could not create the default space: ${errorText(e)}`;
      // A cellapp that reported it meanwhile runs it: nothing is missing.
      if (this.host.spaces.all.has(DEFAULT_SPACE_ID)) log.info(why);
      else log.error(why);
    }
  }
}
