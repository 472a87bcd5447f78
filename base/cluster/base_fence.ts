/**
 * Fencing on the baseapp side. The cellappmgr declares a baseapp dead after a silence (a stall, a SIGSTOP, a
 * partition) and the holders of its backups restore its bases; the baseapp may not know. Two things make it doubt
 * that it still holds its bases: a stall of its own, and its lease lapsing (core/wire/lease.ts: the cellappmgr has
 * not answered for the lease's length, well before it may declare the baseapp dead). While it doubts it holds back
 * everything that acts for its bases (database writes, messages to cells, its clients' input among them, base
 * backups, calls to other baseapps, logins) until the cellappmgr confirms it, and when the cellappmgr says it was
 * fenced it drops them all, writing nothing: the restored copies are the live ones. Its clients stay connected
 * meanwhile.
 */
import type { Logger } from "../../core/log.ts";
import { history } from "../../core/history.ts";
import {
  CellMsg,
  checkMove,
  confirmOnLink,
  type MessageDef,
  type MgrLease,
  type MgrLink,
} from "../../core/wire/mod.ts";
import { copyPose, type Pose } from "../../core/geo/mod.ts";
import { CellRoute, type PeerSource } from "../cell_link/mod.ts";

/** How often the event loop's progress and the lease are sampled. */
const BEAT_MS = 100;

/**
 * Longest a client's input (a call or move for its cell) is held back: older input is refused, with an error its
 * client sees, when the bases act again. The client has moved on by then; the cellapp refuses what it held back as
 * long (cell/fence.ts MAX_HOLD_MS).
 */
export const MAX_INPUT_HOLD_MS = 20_000;

/** Inputs of one client held back at most: past it they are refused at once, with an error its client sees. */
export const MAX_HELD_INPUTS = 1_000;

/** Whether this baseapp may act for its bases, and waiting until it may. */
export class BaseAuthority {
  #lastBeat = performance.now();
  /** It stalled for half the dead timeout: it doubts until a ping sent after it is answered, or a registration. */
  #stalled = false;
  #pinging = false;
  /** It may not act (a stall, the lease lapsed, or awaiting the lease's first answer). */
  #paused = false;
  /** The pause was logged, or is not to be. */
  #told = false;
  /** Its end is to be logged (its start was). */
  #tellEnd = false;
  /** Settled when the bases may act again (resolved) or the baseapp is fenced (rejected); null while they may. */
  #confirm: PromiseWithResolvers<void> | null = null;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly link: MgrLink,
    private readonly lease: MgrLease,
    private readonly log: Logger,
    /** The number of bases held, for the log. */
    private readonly bases: () => number = () => 0,
  ) {
    lease.onGranted = () => this.#update();
    this.#timer = setInterval(() => {
      this.#beat();
      this.#update();
    }, BEAT_MS);
  }

  /**
   * Whether this baseapp may act for its bases now. Checked where it acts, not only by the sampling timer: after a
   * SIGCONT the first callback to run may be an autosave, before the timer has seen the gap; a lease runs out
   * between two samples.
   */
  mayAct(): boolean {
    // One clock read: this runs for every message a base sends, a client's every move among them.
    const now = performance.now();
    this.#beat(now);
    return this.#update(now);
  }

  /** Resolves at once while this baseapp may act, else once the cellappmgr confirms it; rejects if it was fenced. */
  confirmed(): Promise<void> {
    if (this.mayAct()) return Promise.resolve();
    return this.#confirm!.promise;
  }

  /** The cellappmgr took this baseapp's registration (after a stall too); the lease is renewed at once. */
  registered(): void {
    this.#stalled = false;
    this.lease.renewNow();
    this.#update();
  }

  /** The cellappmgr said this baseapp was fenced: whatever waits to act is refused. */
  fenced(why: string): void {
    const c = this.#confirm;
    this.#confirm = null;
    this.#stalled = false;
    // It registers again as a new baseapp next: it acts once that registration's lease is granted, without a word.
    this.#paused = true;
    this.#told = true;
    this.#tellEnd = false;
    if (c) {
      c.promise.catch(() => {});
      c.reject(new Error(`this baseapp was fenced: ${why}`));
    }
  }

  /** Stops sampling. */
  close(): void {
    clearInterval(this.#timer);
  }

  #beat(now: number = performance.now()): void {
    const gap = now - this.#lastBeat;
    this.#lastBeat = now;
    if (gap > this.link.deadAfterMs / 2) this.#doubt(gap);
  }

  /** Decides whether the bases may act now; logs a pause and its end once each, and writes both to the history. */
  #update(now: number = performance.now()): boolean {
    const may = !this.#stalled && this.lease.held(now);
    history.acting(may);
    if (may) {
      if (this.#paused) {
        this.#paused = false;
        if (this.#tellEnd) this.log.info("the cellappmgr confirmed this baseapp again: its bases act again");
        this.#told = false;
        this.#tellEnd = false;
      }
      const c = this.#confirm;
      this.#confirm = null;
      c?.resolve();
      return true;
    }
    this.#confirm ??= Promise.withResolvers<void>();
    this.#paused = true;
    // Awaiting the first answer after a registration is a round trip, not worth a word.
    if (!this.#told && !this.#stalled && this.lease.granted && !this.lease.starting(now)) {
      this.#told = this.#tellEnd = true;
      this.log.warn(
        `lease lapsed: ${this.lease.lapse(now)} (lease ${this.lease.ms} ms, it declares a baseapp dead after ` +
          `${this.link.deadAfterMs} ms): its ${this.bases()} base(s) write nothing and send nothing, and its ` +
          `clients' input waits, until it confirms them`,
      );
    }
    return false;
  }

  /** Holds back acting, and asks the cellappmgr with a ping that can only be answered on a live link. */
  #doubt(gap: number): void {
    this.#stalled = true;
    if (!this.#told) {
      this.#told = this.#tellEnd = true;
      this.log.warn(
        `this baseapp stalled ${Math.round(gap)} ms; the cellappmgr may have declared it dead (it does after ` +
          `${this.link.deadAfterMs} ms): its bases write nothing and send nothing until it confirms them`,
      );
    }
    this.#update();
    if (this.#pinging) return;
    const asked = confirmOnLink(this.link);
    if (!asked) return;
    this.#pinging = true;
    asked.then((ok) => {
      if (!ok) return;
      this.#stalled = false;
      this.#update();
    }).finally(() => (this.#pinging = false));
  }
}

/**
 * `peers` as the routes to cell entities see them: while `authority` doubts there is no open channel, and dialling
 * waits for its word, so what the bases send their cells waits in order (and is dropped if this baseapp was fenced).
 */
export function heldBackPeers(authority: BaseAuthority, peers: PeerSource): PeerSource {
  return {
    peek: (address) => authority.mayAct() ? peers.peek(address) : undefined,
    get: async (address) => {
      await authority.confirmed();
      return await peers.get(address);
    },
  };
}

/** What a client sends its cell entity through its base: held back no longer than MAX_INPUT_HOLD_MS. */
const CLIENT_INPUT: ReadonlySet<number> = new Set([CellMsg.clientCall.kind, CellMsg.clientAoi.kind]);

/** A message to the cell entity held back until the bases may act. */
interface Held {
  /** performance.now() when it was held back. */
  at: number;
  /** The client's input: refused when held back too long. */
  input: boolean;
  run(): void;
  fail(e: Error): void;
}

/**
 * The route from a base to its cell entity, holding back what it would send while `authority` doubts: in order,
 * until the bases may act again, and dropped if this baseapp is fenced. What its client sent (calls, moves, AOI
 * requests) waits MAX_INPUT_HOLD_MS at most and MAX_HELD_INPUTS at most; what is refused is told to the client
 * through `refuse`.
 */
export class HeldBackRoute extends CellRoute {
  #held: Held[] = [];
  #inputs = 0;
  /** Input was refused in this pause for being too much: said once. */
  #overflowTold = false;
  /** Tells the base's client that input of it was refused (an error reply). */
  refuse: ((message: string) => void) | null = null;

  constructor(
    private readonly authority: BaseAuthority,
    peers: PeerSource,
    log: Logger,
    /** Longest a client's input is held back (MAX_INPUT_HOLD_MS). */
    private readonly maxHoldMs: number = MAX_INPUT_HOLD_MS,
  ) {
    super(peers, log);
  }

  /** CellRoute.send, held back while the bases may not act. */
  override send<A extends unknown[]>(def: MessageDef<A, unknown>, ...args: A): void {
    if (!this.#holds()) return super.send(def, ...args);
    const bad = def.check(args);
    if (bad) throw new Error(`not sending ${def.name}: ${bad}`);
    const kept = copied(args);
    this.#hold(CLIENT_INPUT.has(def.kind), () => super.send(def, ...kept), () => {});
  }

  /** CellRoute.sendMove, held back while the bases may not act. */
  override sendMove(id: number, pose: Pose): void {
    if (!this.#holds()) return super.sendMove(id, pose);
    const bad = checkMove(id, pose);
    if (bad) throw new Error(`not sending a move: ${bad}`);
    const kept = copyPose(pose);
    this.#hold(true, () => super.sendMove(id, kept), () => {});
  }

  /** CellRoute.request, held back while the bases may not act. */
  override request<A extends unknown[], R>(def: MessageDef<A, R>, ...args: A): Promise<R> {
    if (!this.#holds()) return super.request(def, ...args);
    const bad = def.check(args);
    if (bad) return Promise.reject(new Error(`not sending ${def.name}: ${bad}`));
    const kept = copied(args);
    return new Promise<R>((resolve, reject) => {
      this.#hold(false, () => super.request(def, ...kept).then(resolve, reject), reject);
    });
  }

  #holds(): boolean {
    return this.#held.length > 0 || !this.authority.mayAct();
  }

  #hold(input: boolean, run: () => void, fail: (e: Error) => void): void {
    if (input && this.#inputs >= MAX_HELD_INPUTS) {
      if (!this.#overflowTold) {
        this.#overflowTold = true;
        this.refuse?.(
          `more than ${MAX_HELD_INPUTS} inputs wait for this baseapp to be confirmed by the cellappmgr: ` +
            `further input is refused until it is`,
        );
      }
      return;
    }
    if (this.#held.length === 0) this.#await();
    if (input) this.#inputs++;
    this.#held.push({ at: performance.now(), input, run, fail });
  }

  #await(): void {
    this.authority.confirmed().then(() => this.#flush(), (e: Error) => this.#dropAll(e));
  }

  /** The bases may act again: what waited goes, in order, but for client input held back too long. */
  #flush(): void {
    if (this.#held.length === 0) return;
    if (!this.authority.mayAct()) return this.#await();
    const waiting = this.#held;
    this.#held = [];
    this.#inputs = 0;
    this.#overflowTold = false;
    const now = performance.now();
    let stale = 0;
    for (const h of waiting) {
      if (h.input && now - h.at > this.maxHoldMs) stale++;
      else h.run();
    }
    if (stale > 0) {
      this.refuse?.(
        `${stale} input(s) of this client were held back for more than ${this.maxHoldMs} ms while its baseapp ` +
          `awaited the cellappmgr's word, and were refused`,
      );
    }
  }

  #dropAll(e: Error): void {
    const waiting = this.#held;
    this.#held = [];
    this.#inputs = 0;
    this.#overflowTold = false;
    for (const h of waiting) h.fail(e);
  }
}

/** `args` to keep while they wait: byte arrays may be views of a buffer that is reused. */
function copied<A extends unknown[]>(args: A): A {
  return args.map((a) => a instanceof Uint8Array ? a.slice() : a) as A;
}
