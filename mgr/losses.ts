/**
 * Entities lost for good. A cellapp's reals with a base come back from their bases' backups; those without (NPCs)
 * only from the backups its buddy cellapp holds (buddies.ts). When a cellapp dies with no buddy, or its buddy is
 * gone already or dies with it (within LOST_WITH_MS: before it could restore them), nobody can bring them back. The
 * cellappmgr logs that once per space: how many, of which types (as the dead cellapp last reported them), and why.
 */
import type { CellReport } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";

/** A buddy that dies this soon after the cellapp it backs up is taken to have died with it. */
export const LOST_WITH_MS = 1000;

/** Per space, the reals without a base a cellapp held, by type name. */
export type Unbacked = Map<number, Map<string, number>>;

/** A dead cellapp's buddy as the cellappmgr knows it at the death. */
export interface BuddyState {
  id: number;
  /** Whether it is still a member. */
  alive: boolean;
  /** Ms since the dead cellapp was told this buddy: a buddy given just now holds few backups or none yet. */
  toldMsAgo: number;
  /** The buddy it had before this one, if any. */
  previous?: number | null;
}

/** What a dead cellapp's buddy was to restore, until it has had the time to. */
interface Pending {
  dead: number;
  unbacked: Unbacked;
  at: number;
}

/** Sums the `unbacked` figures of `reports` by space and type. */
export function unbackedOf(reports: Iterable<CellReport>): Unbacked {
  const out: Unbacked = new Map();
  for (const r of reports) {
    for (const [type, n] of r.unbacked ?? []) {
      if (n <= 0) continue;
      const space = out.get(r.spaceId) ?? new Map<string, number>();
      space.set(type, (space.get(type) ?? 0) + n);
      out.set(r.spaceId, space);
    }
  }
  return out;
}

/** The dead cellapps whose NPCs a buddy is restoring, and the log of what could not be. */
export class Losses {
  /** By buddy id: the cellapps that died just before, whose NPCs it was told to restore. */
  readonly #pending = new Map<number, Pending[]>();

  constructor(private readonly log: Logger) {}

  /**
   * Cellapp `dead` died holding `unbacked`; `buddy` holds their backups (null: none). Logs the loss at once when
   * nobody can restore them; otherwise remembers them for a while, in case the buddy dies too.
   */
  cellAppDied(dead: number, buddy: BuddyState | null, unbacked: Unbacked, now = Date.now()): void {
    // What it was to restore for others is lost with it if they died just before.
    for (const p of this.#take(dead, now)) {
      this.#report(p.dead, p.unbacked, `their only backups were on its buddy, cellapp ${dead}, which died with it`);
    }
    if (unbacked.size === 0) return;
    if (buddy === null) return this.#report(dead, unbacked, "it had no buddy cellapp to back them up");
    if (!buddy.alive) {
      return this.#report(dead, unbacked, `their only backups were on its buddy, cellapp ${buddy.id}, gone before it`);
    }
    if (buddy.toldMsAgo < LOST_WITH_MS) {
      return this.#report(
        dead,
        unbacked,
        `its buddy cellapp ${buddy.id} was given it only ${Math.round(buddy.toldMsAgo)} ms before (its previous ` +
          `buddy${
            buddy.previous == null ? "" : `, cellapp ${buddy.previous},`
          } had died) and held no backups of them yet`,
      );
    }
    const list = this.#pending.get(buddy.id) ?? [];
    list.push({ dead, unbacked, at: now });
    this.#pending.set(buddy.id, list);
  }

  /** The entries pending on `buddy` recent enough to be lost with it; drops every entry older than LOST_WITH_MS. */
  #take(buddy: number, now: number): Pending[] {
    for (const [id, list] of this.#pending) {
      const kept = list.filter((p) => now - p.at <= LOST_WITH_MS || id === buddy);
      if (kept.length) this.#pending.set(id, kept);
      else this.#pending.delete(id);
    }
    const mine = (this.#pending.get(buddy) ?? []).filter((p) => now - p.at <= LOST_WITH_MS);
    this.#pending.delete(buddy);
    return mine;
  }

  #report(dead: number, unbacked: Unbacked, why: string): void {
    for (const [spaceId, types] of unbacked) {
      const total = [...types.values()].reduce((a, b) => a + b, 0);
      const byType = [...types].sort(([a], [b]) => a.localeCompare(b)).map(([t, n]) => `${n} ${t}`).join(", ");
      this.log.error(
        `space ${spaceId} lost ${total} entities for good with cellapp ${dead} (${byType}): ${why}`,
        { space: spaceId },
      );
    }
  }
}
