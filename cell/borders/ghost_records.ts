/**
 * What a real keeps about its ghosts and a ghost about its real: the records an
 * entity holds in its ghosting and ghostInfo slots, which the border mechanisms
 * (ghosts.ts, offload.ts, frozen_ghosts.ts) fill and read.
 */
import type { GhostOp } from "../../core/wire/mod.ts";
import type { CellAddress } from "../cell_layout.ts";

/** One ghost of a real, in another cell (of another cellapp, or of the same one). */
export interface GhostLink extends CellAddress {
  state: "creating" | "live";
  /** Cell time (ms) when it was asked for (creating) or confirmed (live). */
  since: number;
}

/** What a real keeps about its ghosts. */
export class RealGhosting {
  /** The ghosts by the id of the cell holding them. */
  readonly links: Map<number, GhostLink> = new Map();
  /** Number of the last batch sent. */
  seq = 0;
  /** The number the ghosts were last told is the latest (at a ghost check, when it changed). */
  announcedSeq = 0;
  /** This tick's changes, sent at the end of the tick. */
  ops: GhostOp[] = [];
  lastX = NaN;
  lastY = NaN;
  lastZ = NaN;
  lastYaw = NaN;
  lastPitch = NaN;
  lastRoll = NaN;
}

/** What a ghost keeps about its real and the batches it has applied. */
export class GhostInfo {
  /** Early batches by number. */
  readonly pending: Map<number, GhostOp[]> = new Map();
  /** The highest batch number known to exist: the latest that arrived, or that the real announced. */
  knownSeq: number;
  /** Cell time since when the ghost has been behind `knownSeq` (NaN while up to date). */
  behindSince = NaN;
  /** Resync requests sent since it fell behind, and the cell time before which it does not ask again. */
  resyncTries = 0;
  nextResyncAt = 0;
  /** Cell time since when its real's cell has been gone from the space (NaN while it lives): see frozen_ghosts.ts. */
  frozenSince = NaN;
  /**
   * Cell time it last heard from its real (a batch or an announcement; NaN: not checked since it was made). A real
   * announces to its ghosts at every check, so one silent for long was lost track of (ghosts.ts isSilent).
   */
  heardAt = NaN;

  constructor(
    public realCellapp: number,
    public realAddress: string,
    public realCell: number,
    /** The last batch applied. */
    public seq: number,
    /** How many times the real had moved cell when this was learnt: older news about the real is ignored. */
    public epoch: number,
  ) {
    this.knownSeq = seq;
  }

  /** Whether batches the real sent are missing here. */
  get behind(): boolean {
    return this.seq < this.knownSeq;
  }
}
