/**
 * Ordering a client's traffic across cell changes (docs/architecture.md, "Ghosts and hand-overs"). The frames for a client come from
 * the cellapp holding its entity's real; when the real moves cell, the old cellapp's last frames and the new one's
 * first frames travel on different channels, so the new ones may arrive first. Every frame carries the real's epoch
 * (how many times it had moved cell), and the old cellapp sends `cellEntityMoved(fromEpoch)` on its channel right
 * after its last frame. The proxy passes on frames of the current epoch, holds frames (and move markers) of later
 * epochs until the marker of the current one arrives, then passes those on in order; frames of an earlier epoch
 * are stale and dropped. Held frames are bounded: past the cap they are dropped and the loss is logged.
 *
 * Only the cellapp that holds the real of an epoch speaks for it: a frame or marker of an epoch from any other
 * cellapp is dropped (a late one of an entity that was destroyed and made again, or a lie). Until the baseapp hears
 * where a new cell entity is, what comes for its epoch is held like a later epoch's, and judged once it does.
 *
 * A notice (the real was teleported: the proxy resets its speed check and tells the client) is ordered like a frame
 * of its epoch, so it takes effect after the frames sent before it and before those sent after.
 */
import { sameAddress } from "../../core/wire/mod.ts";
import { type Logger, Throttle } from "../../core/log.ts";

/** Limits of what is held while waiting for a move marker. */
export interface OrderLimits {
  maxFrames: number;
  maxBytes: number;
}

/** Defaults: a few seconds of a busy client's traffic. */
export const ORDER_LIMITS: OrderLimits = { maxFrames: 512, maxBytes: 4 * 1024 * 1024 };

/** Where the real went, as its old cellapp (`from`) said. */
interface Move {
  spaceId: number;
  address: string;
  from: string;
}

/** A frame (or a notice, run in its place) waiting for its epoch, with the cellapp it came from. */
interface Held {
  bytes: Uint8Array;
  from: string;
  run: (() => void) | null;
}

const NO_BYTES = new Uint8Array(0);

/** Counters, for tests and logs. */
export interface OrderStats {
  delivered: number;
  held: number;
  stale: number;
  overflowed: number;
  moves: number;
  /** Frames and markers from a cellapp that does not hold the real of their epoch. */
  foreign: number;
}

/** One client's frame order across the cellapps its real has been on. */
export class ClientFrameOrder {
  /** The epoch whose frames go straight to the client. */
  epoch = 0;
  readonly stats: OrderStats = { delivered: 0, held: 0, stale: 0, overflowed: 0, moves: 0, foreign: 0 };
  readonly #frames = new Map<number, Held[]>();
  readonly #moves = new Map<number, Move[]>();
  /** The cellapp holding the real of the current epoch; null before the cell entity is located. */
  #address: string | null = null;
  #heldFrames = 0;
  #heldBytes = 0;
  #foreignLog = new Throttle(60_000);

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

  /**
   * The cell entity of the current epoch is on the cellapp at `address` (when first located). What that cellapp sent
   * before the baseapp heard where the entity is (its reply comes by way of the cellappmgr, its frames and backups
   * straight) goes out now, in order, and then its move marker if one came.
   */
  start(address: string): void {
    this.#address = address;
    const held = this.#frames.get(this.epoch);
    if (held) {
      this.#frames.delete(this.epoch);
      this.#pass(held);
    }
    this.#advance();
  }

  /** A frame from the real of `epoch`, which arrived from the cellapp at `from`. */
  frame(epoch: number, bytes: Uint8Array, from: string): void {
    this.#take(epoch, bytes, from, null);
  }

  /** A notice from the real of `epoch` (at `from`): `run` is called in order with that epoch's frames. */
  notice(epoch: number, from: string, run: () => void): void {
    this.#take(epoch, NO_BYTES, from, run);
  }

  #take(epoch: number, bytes: Uint8Array, from: string, run: (() => void) | null): void {
    if (epoch === this.epoch && this.#address !== null) {
      if (!this.#holds(from, run ? "notice" : "frame")) return;
      this.stats.delivered++;
      return run ? run() : this.deliver(bytes);
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
    list.push({ bytes, from, run });
    this.#heldFrames++;
    this.#heldBytes += bytes.length;
    this.stats.held++;
  }

  /** The real of `fromEpoch` moved to `address`: its frames are all in. Told by `from`. */
  moved(fromEpoch: number, spaceId: number, address: string, from: string): void {
    if (fromEpoch < this.epoch) {
      this.log.info(`stale move marker of epoch ${fromEpoch} from ${from} ignored (now at epoch ${this.epoch})`);
      return;
    }
    if (fromEpoch === this.epoch && this.#address !== null && !this.#holds(from, "move marker")) return;
    let list = this.#moves.get(fromEpoch);
    if (!list) this.#moves.set(fromEpoch, list = []);
    if (list.length < 8) list.push({ spaceId, address, from });
    this.#advance();
  }

  /** Follows the real through every move whose marker is in, passing on each new epoch's held frames. */
  #advance(): void {
    for (let m = this.#nextMove(); m !== undefined; m = this.#nextMove()) {
      this.epoch++;
      this.stats.moves++;
      this.#address = m.address;
      this.relocate(m.spaceId, m.address);
      const held = this.#frames.get(this.epoch);
      if (!held) continue;
      this.#frames.delete(this.epoch);
      this.#pass(held);
    }
  }

  /** Passes on, in order, what was held for the current epoch and came from the cellapp holding it. */
  #pass(held: Held[]): void {
    this.#heldFrames -= held.length;
    for (const h of held) {
      this.#heldBytes -= h.bytes.length;
      if (!this.#holds(h.from, h.run ? "notice" : "frame")) continue;
      this.stats.delivered++;
      if (h.run) h.run();
      else this.deliver(h.bytes);
    }
  }

  /** The marker of the current epoch from the cellapp that holds it, if it came (none before it is located). */
  #nextMove(): Move | undefined {
    const list = this.#moves.get(this.epoch);
    if (!list || this.#address === null) return undefined;
    this.#moves.delete(this.epoch);
    const m = list.find((m) => this.#address !== null && sameAddress(m.from, this.#address));
    if (!m) { for (const other of list) this.#holds(other.from, "move marker"); }
    return m;
  }

  /** Whether `from` holds the real of the current epoch; a message from elsewhere is counted and dropped. */
  #holds(from: string, what: string): boolean {
    if (this.#address !== null && sameAddress(from, this.#address)) return true;
    this.stats.foreign++;
    const held = this.#foreignLog.take(from);
    if (held !== null) {
      this.log.warn(
        `${what} of epoch ${this.epoch} from ${from} dropped: the real is on ${this.#address}` +
          Throttle.note(held),
      );
    }
    return false;
  }

  /**
   * The cell entity was restored from a backup on the cellapp at `address` as `epoch` (its cellapp died): what was
   * held belongs to the lost real.
   */
  restart(epoch: number, address: string): void {
    this.reset();
    this.epoch = epoch;
    this.#address = address;
  }

  /** A new cell entity (epoch 0 again): whatever was held belongs to the old one. */
  reset(): void {
    if (this.#heldFrames > 0) this.log.info(`${this.#heldFrames} held frames dropped: the cell entity is new`);
    this.epoch = 0;
    this.#address = null;
    this.#frames.clear();
    this.#moves.clear();
    this.#heldFrames = this.#heldBytes = 0;
  }
}
