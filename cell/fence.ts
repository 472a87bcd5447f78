/**
 * Fencing on the cellapp side. The cellappmgr declares a cellapp dead after
 * a silence (a stall, a SIGSTOP, a partition) and gives its cells to others;
 * the cellapp may not know. After a stall of its own it therefore stops
 * acting as the holder of its cells (no tick: no ghost updates, hand-overs or
 * client frames) until the cellappmgr confirms it, and when the cellappmgr says
 * it was fenced it drops every cell and entity it held, telling no one: they
 * belong to others now.
 */
import type { Logger } from "../core/log.ts";
import { type Channel, ChannelMsg, type MgrLink } from "../core/wire/mod.ts";
import type { Cell } from "./cell.ts";

/** Drops every cell of `cells` with its reals and ghosts, without a word to bases or peers; returns the counts. */
export function dropAllCells(cells: Map<string, Cell>): { cells: number; reals: number; ghosts: number } {
  let reals = 0, ghosts = 0;
  for (const c of cells.values()) {
    reals += c.entities.size;
    ghosts += c.ghosts.size;
    c.dispose();
  }
  const n = cells.size;
  cells.clear();
  return { cells: n, reals, ghosts };
}

/**
 * Whether this cellapp may act as the holder of its cells. A process that
 * stalled (a SIGSTOP, a long pause) for half the cellappmgr's dead timeout
 * may have been declared dead meanwhile, and what it reads on waking may be
 * old: its cells stop ticking until a ping sent after the stall is answered
 * on the same link, or the cellappmgr takes a new registration (which fences
 * it if it was declared dead). A cellappmgr that merely went quiet (it died
 * or restarts) stops nothing: the world goes on without it, and the
 * receivers drop what a fenced generation sends. Logs each change once.
 */
export class Authority {
  #doubted = false;
  #paused = false;
  #pinging = false;

  constructor(private readonly link: MgrLink, private readonly log: Logger) {}

  /** The cellappmgr took this cellapp's registration on the link's channel. */
  registered(): void {
    this.#doubted = false;
  }

  /**
   * `gap` ms after the previous tick began: may the cells tick?
   * `held` says how many cells there are (none: nothing to hold back).
   */
  holds(gap: number, held: number): boolean {
    if (held === 0) {
      this.#paused = false;
      return true;
    }
    if (gap > this.link.deadAfterMs / 2) this.#doubt();
    if (!this.#doubted) {
      if (this.#paused) {
        this.#paused = false;
        this.log.info(`the cellappmgr confirmed this cellapp again: its ${held} cell(s) tick again`);
      }
      return true;
    }
    if (!this.#paused) {
      this.#paused = true;
      this.log.warn(
        `this cellapp stalled ${Math.round(gap)} ms; the cellappmgr may have declared it dead (it does after ` +
          `${this.link.deadAfterMs} ms): its ${held} cell(s) stop ticking until it confirms them`,
      );
    }
    return false;
  }

  /** Asks the cellappmgr again, with a ping that can only be answered on a live link. */
  #doubt(): void {
    this.#doubted = true;
    const ch: Channel | null = this.link.channel;
    if (!ch || this.#pinging) return;
    this.#pinging = true;
    ch.requestWithin(this.link.deadAfterMs, ChannelMsg.ping).then(
      () => {
        if (this.link.channel === ch && ch.isOpen) this.#doubted = false;
      },
      // No answer: the link closes (or has closed) and the registration that follows decides, with its own log line.
      () => {},
    ).finally(() => (this.#pinging = false));
  }
}
