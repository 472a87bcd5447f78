/**
 * Ordering a client's traffic across cell changes (seed 000's proxy forwarding). The frames for a client come from
 * the cellapp holding its entity's real; when the real moves cell, the old cellapp's last frames and the new one's
 * first frames travel on different channels, so the new ones may arrive first. Every frame carries the real's epoch
 * (how many times it had moved cell), and the old cellapp sends `cellEntityMoved(fromEpoch)` on its channel right
 * after its last frame. The proxy passes on frames of the current epoch, holds frames (and move markers) of later
 * epochs until the marker of the current one arrives, then passes those on in order; frames of an earlier epoch
 * are stale and dropped. Held frames are bounded: past the cap they are dropped and the loss is logged.
 */
import type { Logger } from "../core/log.ts";

/** Limits of what is held while waiting for a move marker. */
export interface OrderLimits {
  maxFrames: number;
  maxBytes: number;
}

/** Defaults: a few seconds of a busy client's traffic. */
export const ORDER_LIMITS: OrderLimits = { maxFrames: 512, maxBytes: 4 * 1024 * 1024 };

/** Where the real went, as its old cellapp said. */
interface Move {
  spaceId: number;
  address: string;
}

/** Counters, for tests and logs. */
export interface OrderStats {
  delivered: number;
  held: number;
  stale: number;
  overflowed: number;
  moves: number;
}

/** One client's frame order across the cellapps its real has been on. */
export class ClientFrameOrder {
  /** The epoch whose frames go straight to the client. */
  epoch = 0;
  readonly stats: OrderStats = { delivered: 0, held: 0, stale: 0, overflowed: 0, moves: 0 };
  readonly #frames = new Map<number, Uint8Array[]>();
  readonly #moves = new Map<number, Move>();
  #heldFrames = 0;
  #heldBytes = 0;

  constructor(
    /** Passes bytes to the client. */
    private readonly deliver: (bytes: Uint8Array) => void,
    /** The real is now on the cellapp at `address` (in order with the frames). */
    private readonly relocate: (spaceId: number, address: string) => void,
    private readonly log: Logger,
    private readonly limits: OrderLimits = ORDER_LIMITS,
  ) {}

  /** Frames held, waiting for a move marker. */
  get held(): number {
    return this.#heldFrames;
  }

  /** A frame from the real of `epoch`, which arrived from `from` (for the logs). */
  frame(epoch: number, bytes: Uint8Array, from: string): void {
    if (epoch === this.epoch) {
      this.stats.delivered++;
      return this.deliver(bytes);
    }
    if (epoch < this.epoch) {
      if (this.stats.stale++ === 0) {
        this.log.info(`stale frame of epoch ${epoch} from ${from} dropped (now at epoch ${this.epoch})`);
      }
      return;
    }
    if (this.#heldFrames >= this.limits.maxFrames || this.#heldBytes + bytes.length > this.limits.maxBytes) {
      this.stats.overflowed++;
      this.log.warn(
        `frame of epoch ${epoch} from ${from} dropped: ${this.#heldFrames} frames (${this.#heldBytes} bytes) ` +
          `already wait for the move marker of epoch ${this.epoch}`,
      );
      return;
    }
    let list = this.#frames.get(epoch);
    if (!list) this.#frames.set(epoch, list = []);
    list.push(bytes);
    this.#heldFrames++;
    this.#heldBytes += bytes.length;
    this.stats.held++;
  }

  /** The real of `fromEpoch` moved to `address`: its frames are all in. */
  moved(fromEpoch: number, spaceId: number, address: string, from: string): void {
    if (fromEpoch < this.epoch) {
      this.log.info(`stale move marker of epoch ${fromEpoch} from ${from} ignored (now at epoch ${this.epoch})`);
      return;
    }
    this.#moves.set(fromEpoch, { spaceId, address });
    for (let m = this.#moves.get(this.epoch); m !== undefined; m = this.#moves.get(this.epoch)) {
      this.#moves.delete(this.epoch);
      this.epoch++;
      this.stats.moves++;
      this.relocate(m.spaceId, m.address);
      const list = this.#frames.get(this.epoch);
      if (!list) continue;
      this.#frames.delete(this.epoch);
      this.#heldFrames -= list.length;
      for (const b of list) {
        this.#heldBytes -= b.length;
        this.stats.delivered++;
        this.deliver(b);
      }
    }
  }

  /** A new cell entity (epoch 0 again): whatever was held belongs to the old one. */
  reset(): void {
    if (this.#heldFrames > 0) this.log.info(`${this.#heldFrames} held frames dropped: the cell entity is new`);
    this.epoch = 0;
    this.#frames.clear();
    this.#moves.clear();
    this.#heldFrames = this.#heldBytes = 0;
  }
}
