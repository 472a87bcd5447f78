/**
 * A process's side of a game reload (docs/game.md#reloading-a-game): the game it runs, and a reload in two steps.
 * `prepare` loads the game again and checks that its definitions can replace the running ones in place, keeping it
 * aside; `commit` hands it to the role, which swaps the scripts and definitions of its live entities; `abort` drops
 * it. The cellappmgr runs the steps across the cluster so that every process commits or none does.
 */
import { errorText } from "./errors.ts";
import type { Game } from "./game.ts";
import { incompatibilities } from "./def/compat.ts";
import type { GameVersionView } from "./views.ts";
import type { ReloadStep } from "./wire/messages.ts";

/** A game as loaded from its files, with the version those files make. */
export interface VersionedGame {
  game: Game;
  /** A hash of the game's files. */
  version: string;
}

/** A reload refused: the new game would not load, or would break live data or connected clients. */
export class ReloadError extends Error {
  override name = "ReloadError";
}

/** The game a process runs and its reloads. */
export class GameReloader {
  /** The game in force. */
  game: Game;
  /** What the process reports: its version, reloads and the last failure. */
  readonly view: GameVersionView;
  #prepared: { reload: number; next: VersionedGame } | null = null;

  constructor(
    current: VersionedGame,
    /** Loads the game again from its files (cli/game_source.ts). */
    private readonly load: () => Promise<VersionedGame>,
    /** Swaps `next` in: the role's registry adopts its definitions and live entities get its scripts. */
    private readonly swap: (next: VersionedGame, previous: Game) => void,
  ) {
    this.game = current.game;
    this.view = { version: current.version, reloads: 0 };
  }

  /** Runs one step of reload `reload`; rejects with what went wrong (a prepare that failed says why). */
  async step(step: ReloadStep, reload: number): Promise<GameVersionView> {
    if (step === "prepare") await this.prepare(reload);
    else if (step === "commit") this.commit(reload);
    else this.abort(reload);
    return { ...this.view };
  }

  /** Loads the game again and checks it can replace the running one; keeps it for commit. */
  async prepare(reload: number): Promise<void> {
    this.#prepared = null;
    let next: VersionedGame;
    try {
      next = await this.load();
      const bad = incompatibilities(this.game.registry, next.game.registry);
      if (bad.length > 0) throw new ReloadError(`incompatible with the running game: ${bad.join("; ")}`);
    } catch (e) {
      this.view.error = errorText(e);
      throw e instanceof ReloadError ? e : new ReloadError(errorText(e), { cause: e });
    }
    this.#prepared = { reload, next };
  }

  /** Swaps in the game prepared for `reload`; throws when none is. */
  commit(reload: number): void {
    const p = this.#prepared;
    if (!p || p.reload !== reload) throw new ReloadError(`no game is prepared for reload ${reload}`);
    this.#prepared = null;
    const previous = this.game;
    try {
      this.swap(p.next, previous);
    } catch (e) {
      this.view.error = `the swap failed: ${errorText(e)}`;
      throw new ReloadError(this.view.error, { cause: e });
    }
    this.game = p.next.game;
    this.view.version = p.next.version;
    this.view.reloads++;
    delete this.view.error;
  }

  /** Drops the game prepared for `reload`, if any. */
  abort(reload: number): void {
    if (this.#prepared?.reload === reload) this.#prepared = null;
  }
}
