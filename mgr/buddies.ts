/**
 * Buddy cellapps: each cellapp backs its reals without a base (NPCs) up to another cellapp, the next one
 * by id in a ring of the registered cellapps. Reassigned whenever a cellapp joins or leaves; a lone cellapp has none.
 */
import { errorText } from "../core/errors.ts";
import { BackupMsg } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import type { Registry } from "./registry.ts";

/** Each cellapp's buddy, as last told. */
export class Buddies {
  /** Buddy id (null: none) by cellapp id, as last sent to it. */
  readonly #told = new Map<number, number | null>();
  /** When (Date.now()) each cellapp was last told its buddy. */
  readonly #toldAt = new Map<number, number>();
  /** The buddy each cellapp had before the one it was last told, if any. */
  readonly #before = new Map<number, number | null>();

  constructor(private readonly registry: Registry, private readonly log: Logger) {}

  /** The buddy of each cellapp now: the next one by id in the ring, none when alone. */
  assignment(): Map<number, number | null> {
    const ids = this.registry.withRole("cellapp").map((m) => m.id).sort((a, b) => a - b);
    const out = new Map<number, number | null>();
    ids.forEach((id, i) => out.set(id, ids.length > 1 ? ids[(i + 1) % ids.length] : null));
    return out;
  }

  /** Tells every cellapp whose buddy changed (or that was never told) its buddy. */
  update(): void {
    const now = this.assignment();
    for (const id of this.#told.keys()) {
      if (now.has(id)) continue;
      this.#told.delete(id);
      this.#toldAt.delete(id);
      this.#before.delete(id);
    }
    for (const [id, buddy] of now) {
      // Also "none" to a cellapp never told: after a cellappmgr restart it may still name a buddy that is gone.
      if (this.#told.has(id) && this.#told.get(id) === buddy) continue;
      const m = this.registry.members.get(id)!;
      const b = buddy === null ? null : this.registry.members.get(buddy)!;
      try {
        m.channel.send(BackupMsg.setBuddy, b?.id ?? null, b?.address ?? null);
        this.#before.set(id, this.#told.get(id) ?? null);
        this.#told.set(id, buddy);
        this.#toldAt.set(id, Date.now());
      } catch (e) {
        this.log.warn(`could not tell cellapp ${id} its buddy ${buddy ?? "(none)"}: ${errorText(e)}`);
      }
    }
  }

  /** The buddy cellapp `id` was last told, if any. */
  buddyOf(id: number): number | null {
    return this.#told.get(id) ?? null;
  }

  /** The buddy cellapp `id` had before the one it was last told, if any. */
  previousOf(id: number): number | null {
    return this.#before.get(id) ?? null;
  }

  /** Ms since cellapp `id` was last told its buddy (Infinity when never). */
  toldMsAgo(id: number, now: number = Date.now()): number {
    const at = this.#toldAt.get(id);
    return at === undefined ? Infinity : now - at;
  }
}
