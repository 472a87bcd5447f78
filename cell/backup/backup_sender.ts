/**
 * Sends each real's cell backup once per backup period, spread over the ticks:
 * tick n backs up the reals whose id is n modulo the ticks per period, so no
 * tick carries them all (docs/faults.md, "Backups").
 * A real new to this cellapp (created, restored, or arrived by offload or
 * teleport) is backed up from here at once instead, at most FRESH_PER_TICK a
 * tick: until then a death of this cellapp would lose it.
 */
import type { CellBackup } from "../../core/wire/mod.ts";
import type { BackupCell, BackupEntity } from "./types.ts";

/** The backup period unless configured. */
export const DEFAULT_BACKUP_PERIOD_MS = 1000;
/** Most reals new to this cellapp backed up in one tick besides that tick's share: a big spawn spreads over a few. */
export const FRESH_PER_TICK = 200;

/** Where backups go. */
export interface BackupLink {
  /** Sends the backup of the cell entity of a base to its baseapp. */
  toBase(baseAddress: string, entityId: number, backup: CellBackup): void;
  /** Sends the backup of a real without a base to the buddy cellapp. */
  toBuddy(buddyAddress: string, backup: CellBackup): void;
}

/** Counters, for tests and logs. */
export interface BackupSenderStats {
  toBases: number;
  toBuddy: number;
  /** Reals without a base not backed up: no buddy was named (a lone cellapp). */
  noBuddy: number;
  /** Backups sent early, of reals new to this cellapp. */
  fresh: number;
}

/** One cellapp's backup sending. */
export class BackupSender {
  /** How many ticks one period spans: each real is backed up on one of them. */
  readonly ticksPerPeriod: number;
  readonly stats: BackupSenderStats = { toBases: 0, toBuddy: 0, noBuddy: 0, fresh: 0 };
  /** Where reals without a base are backed up; null while the cellappmgr names none. */
  buddy: { id: number; address: string } | null = null;
  #tick = 0;

  constructor(
    private readonly link: BackupLink,
    tickMs: number,
    periodMs: number = DEFAULT_BACKUP_PERIOD_MS,
    private readonly freshPerTick: number = FRESH_PER_TICK,
  ) {
    this.ticksPerPeriod = Math.max(1, Math.round(periodMs / tickMs));
  }

  /**
   * Once per cellapp tick, after the cells ticked: backs up this tick's share of the reals, and reals not yet backed
   * up from here (oldest first, up to the cap); returns how many.
   */
  tick(cells: Iterable<BackupCell>): number {
    const n = this.ticksPerPeriod;
    const phase = this.#tick++ % n;
    if (this.#tick >= n) this.#tick = 0;
    let sent = 0;
    let fresh = 0;
    for (const cell of cells) {
      for (const e of cell.entities.values()) {
        if (!e.isReal || e.destroyed || e.offloading) continue;
        if (e.id % n !== phase) {
          // One without a base while there is no buddy is counted on its own tick only.
          if (
            fresh >= this.freshPerTick || e.backedUpEpoch === e.epoch || (e.baseAddress === null && !this.buddy)
          ) continue;
          this.#send(cell, e);
          fresh++;
          this.stats.fresh++;
        } else if (!this.#send(cell, e)) continue;
        sent++;
      }
    }
    return sent;
  }

  /** Sends the backup of `e`; false when it has nowhere to go. */
  #send(cell: BackupCell, e: BackupEntity): boolean {
    if (e.baseAddress === null && this.buddy === null) {
      this.stats.noBuddy++;
      return false;
    }
    const backup: CellBackup = { spaceId: cell.spaceId, entity: e.serialise(cell.time), epoch: e.epoch };
    if (e.baseAddress !== null) {
      this.link.toBase(e.baseAddress, e.id, backup);
      this.stats.toBases++;
    } else {
      this.link.toBuddy(this.buddy!.address, backup);
      this.stats.toBuddy++;
    }
    e.backedUpEpoch = e.epoch;
    return true;
  }
}
