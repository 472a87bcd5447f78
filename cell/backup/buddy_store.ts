/**
 * The NPC backups a buddy cellapp keeps for the cellapps that back up to it:
 * the latest backup of each real without a base, per (space, entity), by the
 * cellapp that sent it. BigWorld loses such entities with their cellapp; here
 * the buddy holds what is needed to restore them. A backup that came as a
 * record (npc_backup_records.ts) is kept as its bytes and decoded only when
 * read: nearly all are replaced unread a period later.
 */
import { errorText } from "../../core/errors.ts";
import { type CellBackup, decodeNpcBackup, type NpcBackupRecord } from "../../core/wire/mod.ts";
import { DEFAULT_BACKUP_PERIOD_MS } from "./backup_sender.ts";

/** A kept backup (decoded, or as its record's bytes until read) and when it arrived (ms, the store's clock). */
interface Kept {
  backup: CellBackup | NpcBackupRecord;
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
  /** Told why a kept backup was dropped when read (it did not decode as the backup its record named). */
  onRefused: (why: string) => void = () => {};

  constructor(
    /** A backup not refreshed within this long of its cellapp's latest one is of an entity gone from there. */
    readonly staleAfterMs: number = 2 * DEFAULT_BACKUP_PERIOD_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Keeps `backup` from the cellapp at `from`, replacing that entity's previous one. */
  put(from: string, backup: CellBackup): void {
    this.#keep(from, backup.spaceId, backup.entity.id, backup);
  }

  /** Keeps the backup of a record from the cellapp at `from` as its bytes, replacing that entity's previous one. */
  putRecord(from: string, rec: NpcBackupRecord): void {
    this.#keep(from, rec.spaceId, rec.id, rec);
  }

  #keep(from: string, spaceId: number, id: number, backup: CellBackup | NpcBackupRecord): void {
    const now = this.now();
    let f = this.#from.get(from);
    if (!f) this.#from.set(from, f = { entities: new Map(), lastAt: now, lastSweep: now });
    f.lastAt = now;
    const key = `${spaceId}:${id}`;
    const kept = f.entities.get(key);
    if (kept) {
      kept.backup = backup;
      kept.at = now;
    } else f.entities.set(key, { backup, at: now });
    // Entities destroyed or moved away stop being backed up from there: their entries go once stale.
    if (now - f.lastSweep >= this.staleAfterMs) {
      f.lastSweep = now;
      for (const [key, k] of f.entities) if (f.lastAt - k.at > this.staleAfterMs) f.entities.delete(key);
    }
  }

  /**
   * The current backups from the cellapp at `from`: those refreshed within the stale time of its latest one. One kept
   * as bytes that does not decode as the backup its record named is dropped (and onRefused told why).
   */
  backupsFrom(from: string): CellBackup[] {
    const f = this.#from.get(from);
    if (!f) return [];
    const out: CellBackup[] = [];
    for (const [key, k] of f.entities) {
      if (f.lastAt - k.at > this.staleAfterMs) continue;
      if ("bytes" in k.backup) {
        try {
          k.backup = decodeNpcBackup(k.backup);
        } catch (e) {
          f.entities.delete(key);
          this.onRefused(`NPC backup from ${from} dropped: ${errorText(e)}`);
          continue;
        }
      }
      out.push(k.backup);
    }
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
