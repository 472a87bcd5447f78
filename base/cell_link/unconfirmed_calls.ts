/**
 * The client calls a base sent its cell entity that no cell backup it holds covers yet (docs/faults.md,
 * "Confirmed means durable"). Each call is numbered; the real keeps the number of the last one that ran on it
 * (clientCallSeq), and its backups carry it. A backup with number n confirms the calls up to n: they go. When the
 * cellapp dies and the cell entity is restored from the latest backup, the calls after its number are what the
 * restore would undo: the base replays those of its own entity into the restored one, in order, each once (the real
 * skips a replayed number it has run), and answers each call of another entity with an error, since whether it ran
 * there is not known. They stay kept until a backup of the restored entity confirms them.
 */
import type { CellBackup } from "../../core/wire/mod.ts";

/** One client call of a cell method, as its base sent it to the cell. */
export interface SentCall {
  seq: number;
  target: number;
  typeId: number;
  method: number;
  args: Uint8Array;
}

/** The kept calls after a restore: those to replay into the restored entity, and those to answer with an error. */
export interface AfterRestore {
  replay: SentCall[];
  unknown: SentCall[];
}

/** Counters, for tests and logs. */
export interface UnconfirmedStats {
  /** Calls replayed into a restored cell entity. */
  replayed: number;
  /** Calls answered with callLost (another entity's, or lost with a cell entity not restored). */
  lost: number;
  /** Calls refused because too many waited for a backup. */
  full: number;
}

/** How many calls may wait for a backup: beyond that a client is told to slow down (a backup comes each second). */
export const MAX_UNCONFIRMED = 64;

/** The number of the last client call a backup holds (0: none). */
export function callsIn(backup: CellBackup): number {
  return backup.entity.clientCallSeq ?? 0;
}

/** The unconfirmed client calls of one base, oldest first. */
export class UnconfirmedCalls {
  readonly stats: UnconfirmedStats = { replayed: 0, lost: 0, full: 0 };
  /**
   * The next number. Numbering starts at the wall clock in microseconds, so that a copy of the base restored on
   * another baseapp numbers above its old copy (whose numbers its cell entity and backups may still carry).
   */
  #next = Date.now() * 1000;
  #calls: SentCall[] = [];

  constructor(readonly limit: number = MAX_UNCONFIRMED) {}

  /** How many wait for a backup. */
  get size(): number {
    return this.#calls.length;
  }

  /** Numbers and keeps a call about to go to the cell; null when `limit` calls wait already (it must not go). */
  add(target: number, typeId: number, method: number, args: Uint8Array): SentCall | null {
    if (this.#calls.length >= this.limit) {
      this.stats.full++;
      return null;
    }
    const call = { seq: this.#next++, target, typeId, method, args };
    this.#calls.push(call);
    return call;
  }

  /** A backup holds the calls up to `seq`: they go. */
  confirm(seq: number): void {
    const calls = this.#calls;
    while (calls.length > 0 && calls[0].seq <= seq) calls.shift();
  }

  /**
   * The cell entity `id` was restored from a backup holding the calls up to `seq`: those after it of the entity itself
   * are to be replayed (and stay kept), those of other entities to be answered with an error (they go).
   */
  restored(id: number, seq: number): AfterRestore {
    this.confirm(seq);
    const replay: SentCall[] = [], unknown: SentCall[] = [];
    for (const c of this.#calls) (c.target === id ? replay : unknown).push(c);
    this.#calls = replay;
    this.stats.replayed += replay.length;
    this.stats.lost += unknown.length;
    return { replay, unknown };
  }

  /** The cell entity is gone and not restored: what was kept is lost; returns it, to be answered with an error. */
  lose(): SentCall[] {
    const lost = this.#calls;
    this.#calls = [];
    this.stats.lost += lost.length;
    return lost;
  }

  /** The cell entity is gone by itself (destroyed, its space shut down): what was kept is of no use. */
  clear(): void {
    this.#calls = [];
  }
}
