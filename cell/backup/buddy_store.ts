/**
 * The NPC backups a buddy cellapp keeps for the cellapps that back up to it:
 * the latest backup of each real without a base, per (space, entity), by the
 * cellapp that sent it. BigWorld loses such entities with their cellapp; here
 * the buddy holds what is needed to restore them.
 */
import type { CellBackup } from "../../core/wire/mod.ts";
import { DEFAULT_BACKUP_PERIOD_MS } from "./backup_sender.ts";

/** A kept backup and when it arrived (ms, the store's clock). */
interface Kept {
  backup: CellBackup;
  at: number;
}

/** The backups from one cellapp. */
interface FromCellApp {
  /** By `spaceId:entityId`. */
  entities: Map<string, Kept>;
  /** When its latest backup arrived. */
  lastAt: number;
  lastSweep: number;
}

/** A buddy's backups, by the cellapp they came from. */
export class BuddyStore {
  readonly #from = new Map<string, FromCellApp>();

  constructor(
    /** A backup not refreshed within this long of its cellapp's latest one is of an entity gone from there. */
    readonly staleAfterMs: number = 2 * DEFAULT_BACKUP_PERIOD_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Keeps `backup` from the cellapp at `from`, replacing that entity's previous one. */
  put(from: string, backup: CellBackup): void {
    const now = this.now();
    let f = this.#from.get(from);
    if (!f) this.#from.set(from, f = { entities: new Map(), lastAt: now, lastSweep: now });
    f.lastAt = now;
    f.entities.set(`${backup.spaceId}:${backup.entity.id}`, { backup, at: now });
    // Entities destroyed or moved away stop being backed up from there: their entries go once stale.
    if (now - f.lastSweep >= this.staleAfterMs) {
      f.lastSweep = now;
      for (const [key, k] of f.entities) if (f.lastAt - k.at > this.staleAfterMs) f.entities.delete(key);
    }
  }

  /** The current backups from the cellapp at `from`: those refreshed within the stale time of its latest one. */
  backupsFrom(from: string): CellBackup[] {
    const f = this.#from.get(from);
    if (!f) return [];
    const out: CellBackup[] = [];
    for (const k of f.entities.values()) if (f.lastAt - k.at <= this.staleAfterMs) out.push(k.backup);
    return out;
  }

  /** The cellapps whose backups are kept here. */
  senders(): string[] {
    return [...this.#from.keys()];
  }

  /** Drops what came from the cellapp at `from` (it was restored elsewhere, or no longer backs up here). */
  forget(from: string): void {
    this.#from.delete(from);
  }
}
