/**
 * A game reload across the cluster (docs/game.md#reloading-a-game), run by the cellappmgr in two phases so that
 * every process ends up on the same game: first each process, the cellappmgr included, loads the game again and
 * checks it against the one it runs ("prepare"); only when all of them could does every one swap it in
 * ("commit"), else every one drops it ("abort") and the old game keeps running everywhere.
 */
import { errorText } from "../core/errors.ts";
import type { GameReloader } from "../core/game_reload.ts";
import type { Logger } from "../core/log.ts";
import { RequestError } from "../core/views.ts";
import type { GameReloadView } from "../core/views.ts";
import { ProcMsg, type ReloadStep } from "../core/wire/mod.ts";
import type { Member, Registry } from "./registry.ts";

/** How long a process may take to load and check the game, or to swap it in. */
const STEP_TIMEOUT_MS = 30_000;

/** The cellappmgr's side of game reloads. */
export class ClusterReload {
  #count = 0;
  #running = false;

  constructor(
    private readonly registry: Registry,
    /** The cellappmgr's own game. */
    private readonly own: GameReloader,
    private readonly log: Logger,
  ) {}

  /**
   * Reloads the game in every process, or in none: rejects with a RequestError (conflict) naming each process that
   * could not prepare and why, the old game still running everywhere.
   */
  async reload(): Promise<GameReloadView> {
    if (this.#running) throw new RequestError("conflict", "a game reload is already under way");
    this.#running = true;
    try {
      return await this.#reload(++this.#count);
    } finally {
      this.#running = false;
    }
  }

  async #reload(n: number): Promise<GameReloadView> {
    const members = [...this.registry.members.values()].sort((a, b) => a.id - b.id);
    this.log.info(`game reload ${n}: preparing in the cellappmgr and ${members.length} processes`);
    const failures: string[] = [];
    const [own, ...prepared] = await Promise.allSettled([
      this.own.prepare(n),
      ...members.map((m) => this.#step(m, "prepare", n)),
    ]);
    if (own.status === "rejected") failures.push(`cellappmgr: ${errorText(own.reason)}`);
    prepared.forEach((r, i) => {
      if (r.status === "rejected") failures.push(`${members[i].role} ${members[i].id}: ${errorText(r.reason)}`);
    });
    if (failures.length > 0) {
      this.own.abort(n);
      await Promise.allSettled(members.map((m) => this.#step(m, "abort", n)));
      const why = `game reload refused, the running game goes on: ${failures.join(" | ")}`;
      this.log.warn(why);
      throw new RequestError("conflict", why);
    }
    // Baseapps first: they send their clients the new definitions before any cellapp sends what only those describe.
    const committed = new Map<Member, PromiseSettledResult<void>>();
    for (const wave of [members.filter((m) => m.role === "baseapp"), members.filter((m) => m.role !== "baseapp")]) {
      const settled = await Promise.allSettled(wave.map((m) => this.#step(m, "commit", n)));
      wave.forEach((m, i) => committed.set(m, settled[i]));
    }
    this.own.commit(n);
    const processes: GameReloadView["processes"] = [{ id: 0, role: "cellappmgr", ...this.own.view }];
    members.forEach((m) => {
      const r = committed.get(m)!;
      if (r.status === "rejected") {
        m.game = { version: m.game?.version ?? "", reloads: m.game?.reloads ?? 0, error: errorText(r.reason) };
        this.log.error(`game reload ${n}: ${m.role} ${m.id} failed to swap the game in: ${errorText(r.reason)}`);
      }
      processes.push({ id: m.id, role: m.role, ...m.game! });
    });
    this.log.info(`game reload ${n}: every process runs game version ${this.own.view.version}`);
    return { reloaded: true, version: this.own.view.version, processes };
  }

  /** One step in member `m`; its answer is its game version, recorded for /api/cluster. */
  async #step(m: Member, step: ReloadStep, n: number): Promise<void> {
    try {
      m.game = await m.channel.requestWithin(STEP_TIMEOUT_MS, ProcMsg.reloadGame, step, n);
    } catch (e) {
      if (step === "prepare") {
        m.game = { version: m.game?.version ?? "", reloads: m.game?.reloads ?? 0, error: errorText(e) };
      }
      throw e;
    }
  }
}
