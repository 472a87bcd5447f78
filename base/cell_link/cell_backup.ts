/**
 * The latest backup of a base's cell entity (docs/faults.md, "Backups"): what the
 * cell entity is restored from when its cellapp dies. Only the cellapp holding
 * the real of the epoch speaks for it; the proxy's frame order decides that
 * (client_order.ts), so a backup is ordered like a frame of its epoch.
 */
import { type CellBackup, type CellBackupRecord, decodeBackup, encodeBackup } from "../../core/wire/mod.ts";

/** Counters, for tests and logs. */
export interface CellBackupStats {
  kept: number;
  /** Backups from a cellapp that does not hold the real of their epoch, or of another entity. */
  refused: number;
}

/**
 * A base's latest cell backup, kept as its bytes (core/wire/backup_bytes.ts): a baseapp receives one per cell entity
 * and backup period, and reads one only to restore the entity or to back its base up.
 */
export class CellBackupKeeper {
  readonly stats: CellBackupStats = { kept: 0, refused: 0 };
  #bytes: Uint8Array | null = null;
  #spaceId = 0;

  constructor(readonly entityId: number) {}

  /** Whether a backup is kept. */
  get has(): boolean {
    return this.#bytes !== null;
  }

  /** The latest backup's bytes (backup_bytes.ts), never changed once kept, or null when none is kept. */
  get bytes(): Uint8Array | null {
    return this.#bytes;
  }

  /** The latest backup, decoded afresh (a new object each time), or null when none is kept. */
  get latest(): CellBackup | null {
    return this.#bytes === null ? null : decodeBackup(this.#bytes, this.entityId, this.#spaceId);
  }

  /** Keeps `backup`, which its frame order accepted as the real's; refuses one of another entity. */
  keep(backup: CellBackup): boolean {
    return this.#take(backup.entity.id, backup.spaceId, () => encodeBackup(backup));
  }

  /**
   * Keeps the backup of `rec` as the bytes it came in, undecoded; refuses a record of another entity. Whether the bytes
   * hold this entity's backup is checked when they are read (`latest`).
   */
  keepRecord(rec: CellBackupRecord): boolean {
    return this.#take(rec.id, rec.spaceId, () => rec.bytes);
  }

  /** Keeps the bytes `bytes` makes when `id` is this entity's; counts what it keeps and refuses. */
  #take(id: number, spaceId: number, bytes: () => Uint8Array): boolean {
    if (id !== this.entityId) {
      this.stats.refused++;
      return false;
    }
    this.#bytes = bytes();
    this.#spaceId = spaceId;
    this.stats.kept++;
    return true;
  }

  /** The cell entity is gone: its backups are of no use any more. */
  clear(): void {
    this.#bytes = null;
  }
}
