/**
 * Autosave: every logged-in entity is written to Deno KV once per period, as
 * well as at logout, so that a baseapp killed outright loses at most one
 * period. Each entity's turn comes at its own offset within the period (drawn
 * when it is added), so saves spread over time instead of all landing in one
 * tick.
 */
import { errorText } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";

/** An entity that can write its persistent state now (a proxy). */
export interface Savable {
  readonly id: number;
  /** Writes the persistent state in one commit; rejects with the reason it could not. */
  autosave(): Promise<void>;
}

/** Default seconds between two saves of an entity. */
export const DEFAULT_AUTOSAVE_SEC = 10;

/** The autosave schedule of one baseapp. */
export class Autosave {
  /** When each entity saves next (performance.now() milliseconds). */
  readonly #due = new Map<Savable, number>();
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(readonly periodMs: number, private readonly log: Logger) {
    // Ten looks per period (at most one a second): an entity saves within a tenth of a period of its turn.
    const step = Math.max(20, Math.min(1000, periodMs / 10));
    this.#timer = setInterval(() => this.#run(), step);
  }

  /** Saves `e` once per period from now on, its first save at a random point of the first period. */
  add(e: Savable): void {
    this.#due.set(e, performance.now() + Math.random() * this.periodMs);
  }

  /** Stops saving `e` (it logged out, which saved it). */
  remove(e: Savable): void {
    this.#due.delete(e);
  }

  /** Entities on the schedule. */
  get size(): number {
    return this.#due.size;
  }

  #run(): void {
    const now = performance.now();
    for (const [e, due] of this.#due) {
      if (due > now) continue;
      // After a stall the next turn counts from now, so that a backlog does not save twice in a row.
      const next = due + this.periodMs;
      this.#due.set(e, next > now ? next : now + this.periodMs);
      e.autosave().catch((err) => this.log.error(`autosave of entity ${e.id} failed: ${errorText(err)}`));
    }
  }

  /** Stops the schedule. */
  close(): void {
    clearInterval(this.#timer);
    this.#due.clear();
  }
}
