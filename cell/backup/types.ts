/** What the backup mechanism needs of cells and their entities: Cell and Entity satisfy these. */
import type { EntitySnapshot } from "../../core/wire/mod.ts";

/** A real entity as a backup sees it. */
export interface BackupEntity {
  readonly id: number;
  readonly isReal: boolean;
  readonly destroyed: boolean;
  /** Set while the real is handed to another cell: its state travels with the hand-over, not in a backup. */
  readonly offloading: unknown;
  /** Its base's baseapp; null for an entity without a base (an NPC). */
  readonly baseAddress: string | null;
  readonly epoch: number;
  /**
   * Its epoch when this cellapp last backed it up (-1: never): one that differs is new here (created, restored, or
   * arrived with a new epoch) and is backed up at once. Kept on the entity, read every tick without a lookup.
   */
  backedUpEpoch: number;
  serialise(now: number): EntitySnapshot;
}

/** A cell as a backup sees it. */
export interface BackupCell {
  readonly spaceId: number;
  /** Game time in ms (timers' due times are relative to it). */
  readonly time: number;
  readonly entities: ReadonlyMap<number, BackupEntity>;
}
