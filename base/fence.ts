/**
 * Fencing on the baseapp side. The cellappmgr declares a baseapp
 * dead after a silence (a stall, a SIGSTOP, a partition) and the holders of
 * its backups restore its bases; the baseapp may not know. After a stall of
 * its own it therefore holds back everything that acts for its bases (database
 * writes, messages to cells, base backups, logins) until the cellappmgr
 * confirms it, and when the cellappmgr says it was fenced it drops them all,
 * writing nothing: the restored copies are the live ones.
 */
import type { Logger } from "../core/log.ts";
import { type Channel, ChannelMsg, type MgrLink } from "../core/wire/mod.ts";
import type { PeerSource } from "./cell_route.ts";

/** How often the event loop's progress is sampled. */
const BEAT_MS = 100;

/** Whether this baseapp may act for its bases, and waiting until it may. */
export class BaseAuthority {
  #lastBeat = performance.now();
  #doubted = false;
  #pinging = false;
  /** Settled when the doubt is lifted (resolved) or the baseapp is fenced (rejected). */
  #confirm: PromiseWithResolvers<void> | null = null;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(private readonly link: MgrLink, private readonly log: Logger) {
    this.#timer = setInterval(() => this.#beat(), BEAT_MS);
  }

  /**
   * Whether this baseapp may act for its bases now. Checked where it acts, not only by the sampling timer: after a
   * SIGCONT the first callback to run may be an autosave, before the timer has seen the gap.
   */
  mayAct(): boolean {
    this.#beat();
    return !this.#doubted;
  }

  /** Resolves at once while this baseapp may act, else once the cellappmgr confirms it; rejects if it was fenced. */
  confirmed(): Promise<void> {
    if (this.mayAct()) return Promise.resolve();
    return this.#confirm!.promise;
  }

  /** The cellappmgr took this baseapp's registration (after a stall too): it acts again. */
  registered(): void {
    this.#lift();
  }

  /** The cellappmgr said this baseapp was fenced: whatever waits to act is refused. */
  fenced(why: string): void {
    const c = this.#confirm;
    this.#confirm = null;
    this.#doubted = false;
    if (c) {
      c.promise.catch(() => {});
      c.reject(new Error(`this baseapp was fenced: ${why}`));
    }
  }

  /** Stops sampling. */
  close(): void {
    clearInterval(this.#timer);
  }

  #beat(): void {
    const now = performance.now();
    const gap = now - this.#lastBeat;
    this.#lastBeat = now;
    if (gap > this.link.deadAfterMs / 2) this.#doubt(gap);
  }

  #lift(): void {
    if (!this.#doubted) return;
    this.#doubted = false;
    const c = this.#confirm;
    this.#confirm = null;
    c?.resolve();
    this.log.info("the cellappmgr confirmed this baseapp again: its bases act again");
  }

  /** Holds back acting, and asks the cellappmgr with a ping that can only be answered on a live link. */
  #doubt(gap: number): void {
    if (!this.#doubted) {
      this.#doubted = true;
      this.#confirm = Promise.withResolvers<void>();
      this.log.warn(
        `this baseapp stalled ${Math.round(gap)} ms; the cellappmgr may have declared it dead (it does after ` +
          `${this.link.deadAfterMs} ms): its bases write nothing and send nothing until it confirms them`,
      );
    }
    const ch: Channel | null = this.link.channel;
    if (!ch || this.#pinging) return;
    this.#pinging = true;
    ch.requestWithin(this.link.deadAfterMs, ChannelMsg.ping).then(
      () => {
        if (this.link.channel === ch && ch.isOpen) this.#lift();
      },
      // No answer: the link closes (or has closed) and the registration that follows decides.
      () => {},
    ).finally(() => (this.#pinging = false));
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
