/**
 * Fencing on the cellapp side. The cellappmgr declares a cellapp dead after
 * a silence (a stall, a SIGSTOP, a partition) and gives its cells to others;
 * the cellapp may not know. It therefore stops acting as the holder of its
 * cells (no tick: no ghost updates, hand-overs or client frames) as soon as
 * the cellappmgr may have declared it dead, and when the cellappmgr then says
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
 * Whether this cellapp may act as the holder of its cells. Only on a link
 * channel the cellappmgr confirmed (the registration, or a ping it answered
 * after a doubt), and only while it has been heard from within half its dead
 * timeout, so that the cells stop well before it can have given them away.
 * After a stall of this process (a SIGSTOP, a long pause) what it reads may
 * be old: the channel must be confirmed again by a ping sent after the stall.
 * Logs when that changes, once each way.
 */
export class Authority {
  #paused = false;
  #confirmed: Channel | null = null;
  #pinging = false;

  constructor(private readonly link: MgrLink, private readonly log: Logger) {}

  /** The cellappmgr took this cellapp's registration on the link's channel. */
  registered(): void {
    this.#confirmed = this.link.channel;
  }

  /**
   * At `now`, `gap` ms after the previous tick began: may the cells tick?
   * `held` says how many cells there are (none: nothing to hold back).
   */
  holds(now: number, gap: number, held: number): boolean {
    if (held === 0) {
      this.#paused = false;
      return true;
    }
    const ch = this.link.channel;
    const limit = this.link.deadAfterMs / 2;
    const silent = this.link.silentMs(now);
    if (gap > limit || silent > limit) this.#doubt(ch);
    if (ch !== null && ch === this.#confirmed) {
      if (this.#paused) {
        this.#paused = false;
        this.log.info(`the cellappmgr confirmed this cellapp again: its ${held} cell(s) tick again`);
      }
      return true;
    }
    if (!this.#paused) {
      this.#paused = true;
      this.log.warn(
        `the cellappmgr may have declared this cellapp dead (${
          ch ? `not heard from for ${Math.round(silent)} ms, stalled ${Math.round(gap)} ms` : "no link"
        }; it does after ${this.link.deadAfterMs} ms): its ${held} cell(s) stop ticking until it confirms them`,
      );
    }
    return false;
  }

  /** Forgets the confirmation and asks the cellappmgr again, with a ping that can only be answered on a live link. */
  #doubt(ch: Channel | null): void {
    this.#confirmed = null;
    if (!ch || this.#pinging) return;
    this.#pinging = true;
    ch.requestWithin(this.link.deadAfterMs, ChannelMsg.ping).then(
      () => {
        if (this.link.channel === ch && ch.isOpen) this.#confirmed = ch;
      },
      // No answer: the link closes (or has closed) and the registration that follows decides, with its own log line.
      () => {},
    ).finally(() => (this.#pinging = false));
  }
}
