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
import { argsBytes, copyArgs } from "../core/bytes/mod.ts";
import { confirmOnLink, type Handlers, type MessageDef, type MgrLease, type MgrLink } from "../core/wire/mod.ts";
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

/** Messages held back while the cells may not act, at most: past it they fail (requests) or are dropped. */
export const MAX_HELD_BACK = 10_000;

/** Bytes of the arguments of messages held back, at most (argsBytes): past it they fail or are dropped as well. */
export const MAX_HELD_BACK_BYTES = 16 * 1024 * 1024;

/**
 * Longest a message is held back: older ones fail when the cells act again. Their senders have given up on them (an
 * offload is retried and then given up after GHOST_DEFAULTS.offloadTimeoutMs, 30 s: taking it later would make a
 * second real).
 */
export const MAX_HOLD_MS = 20_000;

/** A message held back until the cells may act again. */
interface HeldBack {
  /** performance.now() when it was held back. */
  at: number;
  /** Run however long it waited (a script's answer: nobody gives up on it). */
  keep?: boolean;
  /** What its arguments hold (argsBytes). */
  bytes: number;
  run(): void;
  drop(why: string): void;
}

/**
 * Whether this cellapp may act as the holder of its cells: tick (scripts' timers, controllers, ghost updates,
 * offloads, client frames, backups) and handle what bases, clients and other cells ask of its entities.
 *
 * Two things stop it, each logged once when it starts and once when it ends. Its own stall: a process that stalled
 * (a SIGSTOP, a long pause) for half the cellappmgr's dead timeout may have been declared dead meanwhile, and what
 * it reads on waking may be old; it waits until a ping sent after the stall is answered on the same link, or the
 * cellappmgr takes a new registration (which fences it if it was declared dead). And its lease (core/wire/lease.ts): when the
 * cellappmgr has not answered for the lease's length (a partition, or the cellappmgr died or stalls) the cells hold
 * still, keeping their state, until it answers again. With `--mgr-lease=0` there is no lease: a cellappmgr that
 * merely went quiet stops nothing, and the receivers drop what a fenced generation sends.
 */
export class Authority {
  #doubted = false;
  #paused = false;
  #pinging = false;
  #heldBack: HeldBack[] = [];
  /** What the arguments of #heldBack hold, in bytes. */
  #heldBytes = 0;
  #overflowLogged = false;
  /** The number of cells, read to know whether there is anything to hold back. */
  #held: () => number;

  constructor(
    private readonly link: MgrLink,
    private readonly lease: MgrLease,
    private readonly log: Logger,
    held: () => number,
    /** Longest a message is held back (MAX_HOLD_MS). */
    private readonly maxHoldMs: number = MAX_HOLD_MS,
  ) {
    this.#held = held;
  }

  /** The cellappmgr took this cellapp's registration on the link's channel. */
  registered(): void {
    this.#doubted = false;
    this.lease.renewNow();
  }

  /** Whether what the cells are asked may run now: they hold their cells, or there is none. */
  get acting(): boolean {
    return this.#held() === 0 || (!this.#doubted && !this.#paused && this.lease.held());
  }

  /** Whether what the cells are asked runs at once: they may act and nothing waits before it. */
  get runsNow(): boolean {
    return this.acting && this.#heldBack.length === 0;
  }

  /**
   * `gap` ms after the previous tick began: may the cells tick? Decides and logs a pause or a resumption, and runs
   * what was held back on resuming.
   */
  holds(gap: number): boolean {
    const held = this.#held();
    if (held === 0) {
      this.#resume(held);
      return true;
    }
    if (gap > this.link.deadAfterMs / 2) this.#doubt();
    const now = performance.now();
    if (!this.#doubted && this.lease.held(now)) {
      this.#resume(held);
      return true;
    }
    // Cells just given by a registration wait for the lease's first answer, a round trip away, without a word.
    if (!this.#paused && !this.#doubted && this.lease.starting(now)) return false;
    if (!this.#paused) {
      this.#paused = true;
      if (this.#doubted) {
        this.log.warn(
          `this cellapp stalled ${Math.round(gap)} ms; the cellappmgr may have declared it dead (it does after ` +
            `${this.link.deadAfterMs} ms): its ${held} cell(s) stop ticking until it confirms them`,
        );
      } else {
        this.log.warn(
          `lease lapsed: ${this.lease.lapse(now)} ` +
            `(lease ${this.lease.ms} ms, it declares a cellapp dead after ${this.link.deadAfterMs} ms): ` +
            `its ${held} cell(s) stop acting, keeping their state, until it confirms them`,
        );
      }
    }
    return false;
  }

  /**
   * Runs `run` now when the cells may act, else once they may again (in arrival order), or fails it when they are
   * dropped; at most MAX_HELD_BACK wait, their arguments holding at most MAX_HELD_BACK_BYTES.
   */
  gate<T>(what: string, run: () => T, bytes = 0): T | Promise<Awaited<T>> {
    if (this.runsNow) return run();
    if (this.#heldBack.length >= MAX_HELD_BACK || this.#heldBytes + bytes > MAX_HELD_BACK_BYTES) {
      if (!this.#overflowLogged) {
        this.#overflowLogged = true;
        this.log.warn(
          `${this.#heldBack.length} messages (${this.#heldBytes} bytes) wait for the cellappmgr to confirm this ` +
            `cellapp, the most that may (${MAX_HELD_BACK} messages, ${MAX_HELD_BACK_BYTES} bytes): ${what} and ` +
            `those after it are refused until it does`,
        );
      }
      return Promise.reject(
        new Error(`${what} refused: this cellapp's cells do not act until the cellappmgr confirms them`),
      );
    }
    return new Promise<Awaited<T>>((resolve, reject) => {
      this.#heldBytes += bytes;
      this.#heldBack.push({
        at: performance.now(),
        bytes,
        run: () => {
          try {
            resolve(run() as Awaited<T>);
          } catch (e) {
            reject(e);
          }
        },
        drop: (why) => reject(new Error(`${what} dropped: ${why}`)),
      });
    });
  }

  /**
   * `p` (an answer a script awaits: a call of another entity or of a base), settled only while the cells may act:
   * else once they may again. The script goes on from there, so it must not while they hold still; when the cells
   * are dropped it never settles (the entity is gone with them).
   */
  settle<T>(what: string, p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const after = (done: () => void) => {
        if (this.runsNow) return done();
        if (this.#heldBack.length >= MAX_HELD_BACK) return reject(new Error(`${what} dropped: too many wait`));
        this.#heldBack.push({ at: performance.now(), keep: true, bytes: 0, run: done, drop: () => {} });
      };
      p.then((v) => after(() => resolve(v)), (e) => after(() => reject(e)));
    });
  }

  /** The cells were dropped (fenced): what was held back fails. */
  dropped(why: string): void {
    const waiting = this.#heldBack;
    this.#heldBack = [];
    this.#heldBytes = 0;
    this.#paused = false;
    for (const w of waiting) w.drop(why);
  }

  #resume(held: number): void {
    if (this.#paused) {
      this.#paused = false;
      this.#overflowLogged = false;
      this.log.info(
        `the cellappmgr confirmed this cellapp again: its ${held} cell(s) tick again` +
          (this.#heldBack.length ? `, ${this.#heldBack.length} message(s) held back run now` : ""),
      );
    }
    const waiting = this.#heldBack;
    if (waiting.length === 0) return;
    this.#heldBack = [];
    this.#heldBytes = 0;
    const now = performance.now();
    const tooOld = (w: HeldBack) => !w.keep && now - w.at > this.maxHoldMs;
    const stale = waiting.filter(tooOld).length;
    if (stale > 0) {
      this.log.warn(
        `${stale} message(s) held back for more than ${this.maxHoldMs} ms are refused: their senders gave up`,
      );
    }
    for (const w of waiting) {
      if (tooOld(w)) w.drop(`held back for more than ${this.maxHoldMs} ms`);
      else w.run();
    }
  }

  /** Asks the cellappmgr again, with a ping that can only be answered on a live link. */
  #doubt(): void {
    this.#doubted = true;
    if (this.#pinging) return;
    const asked = confirmOnLink(this.link);
    if (!asked) return;
    this.#pinging = true;
    asked.then((ok) => {
      if (ok) this.#doubted = false;
    }).finally(() => (this.#pinging = false));
  }
}

/**
 * Makes every message of `defs` wait for `authority` (Authority.gate): what acts on this cellapp's reals (calls from
 * bases, clients and other cells, entities handed over, restores, saves) runs only while its cells may act. Arguments
 * are copied when a message waits: byte arrays may be views of a read buffer that is reused.
 */
export function gateHandlers(
  handlers: Handlers,
  defs: readonly MessageDef<unknown[], unknown>[],
  authority: Authority,
): void {
  handlers.wrap(defs, "the fence's gate", (def, handler) => (ch, ...args) => {
    if (authority.runsNow) return handler(ch, ...args);
    const kept = copyArgs(args);
    return authority.gate(def.name, () => handler(ch, ...kept), argsBytes(kept));
  });
}
