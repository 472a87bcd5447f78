/**
 * The rejoin window of a cellappmgr that starts. A restarted cellappmgr
 * knows nothing, while its members keep running: they reach it again on
 * their own within RETRY_MAX_MS and register with their old ids, the
 * highest entity id they hold and (cellapps) the spaces they run. Until the
 * window closes the cellappmgr decides nothing that depends on what they
 * hold: it makes no space (the default one included) and hands out no
 * entity id, and a process that registers for the first time gets its id
 * after every returning one has its own back.
 */
import { CellMsg, RETRY_MAX_MS, type SpaceGeometry } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import type { Member, Registry } from "./registry.ts";
import type { Spaces } from "./spaces.ts";

/** How long a starting cellappmgr waits for the members of a previous run: their retry period and set-up time. */
export const REJOIN_WINDOW_MS = RETRY_MAX_MS * 4;

/**
 * Requests that may wait for a rejoin window at once: registrations of new processes, entity placements, spawns. Far
 * more new processes than start at once, and each holds its connection while it waits.
 */
export const MAX_REJOIN_WAITING = 256;

/** When a rejoin window that is due to close stays open instead. */
export interface RejoinHold {
  /** Asked when the window is due to close: true keeps it open for another period. */
  stayOpen: () => boolean;
  /** Longest the window stays open, from when it opened, however `stayOpen` answers. */
  maxMs: number;
}

/** A window that closes `ms` after it opened; reopened after the cellappmgr's own stall (see `reopen`). */
export class RejoinWindow {
  #open = false;
  #openedAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** What waits for the window to close, each resolved then (in the order they came). */
  readonly #waiters = new Set<() => void>();
  readonly #onClose: () => void;
  readonly #hold: RejoinHold | null;

  /** `onClose` runs each time the window closes, before anything waiting for it goes on. */
  constructor(
    ms: number,
    onClose: () => void,
    hold: RejoinHold | null = null,
    /** Requests that may wait for the window at once (MAX_REJOIN_WAITING). */
    readonly maxWaiting: number = MAX_REJOIN_WAITING,
  ) {
    this.#onClose = onClose;
    this.#hold = hold;
    this.reopen(ms);
  }

  /**
   * Opens the window again for `ms` (or keeps it open at least that long): after the cellappmgr itself stalled, the
   * members it lost meanwhile are waited for as after a restart, not declared dead for its own silence.
   */
  reopen(ms: number): void {
    clearTimeout(this.#timer);
    if (!this.#open) {
      this.#open = true;
      this.#openedAt = performance.now();
    }
    this.#timer = setTimeout(() => {
      const hold = this.#hold;
      if (hold && performance.now() - this.#openedAt + ms <= hold.maxMs && hold.stayOpen()) return this.reopen(ms);
      this.#open = false;
      try {
        this.#onClose();
      } finally {
        const waiters = [...this.#waiters];
        this.#waiters.clear();
        for (const go of waiters) go();
      }
    }, ms);
  }

  /** True until the window closes. */
  get isOpen(): boolean {
    return this.#open;
  }

  /**
   * Resolves once the window is closed (at once when it is). While it is open, at most `maxWaiting` requests wait:
   * past that, one is refused at once (its sender tries again later). One made on a connection passes that
   * connection's `closed` as `until`: when the connection closes first, the wait rejects and lets go of it, so that
   * connections opened and dropped meanwhile (a process retrying, a hostile peer) are not all kept until the window
   * closes.
   */
  wait(until?: Promise<unknown>): Promise<void> {
    if (!this.#open) return Promise.resolve();
    if (this.#waiters.size >= this.maxWaiting) {
      return Promise.reject(
        new Error(`the cellappmgr waits for its members to rejoin and ${this.#waiters.size} requests wait already`),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const done = () => resolve();
      this.#waiters.add(done);
      until?.then(() => {
        if (this.#waiters.delete(done)) {
          reject(new Error("the connection closed while its request waited for members to rejoin"));
        }
      });
    });
  }

  /** Requests waiting for the window to close. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** Stops the timer (the cellappmgr is stopping); what waits for the window keeps waiting. */
  dispose(): void {
    clearTimeout(this.#timer);
  }
}

/**
 * Takes the spaces a (re-)registering cellapp runs (Spaces.adopt); a claim
 * that cannot stand (its space is known here with another geometry, or its
 * tree gives the cellapp no cell) has its cells shut down on that cellapp,
 * with a log line saying why.
 */
export function adoptClaims(spaces: Spaces, m: Member, geometries: readonly SpaceGeometry[], log: Logger): void {
  for (const { spaceId, why } of spaces.adopt(m.id, geometries)) {
    log.warn(`cellapp ${m.id} ${why}: it is told to shut its cells of space ${spaceId} down`);
    m.channel.send(CellMsg.shutDownSpace, spaceId);
  }
}

/**
 * At the end of the rejoin window: the cells of cellapps named in adopted
 * trees that did not come back go, as if those cellapps had died now (their
 * neighbours cover the area). Returns their ids.
 */
export function dropMissingCellApps(spaces: Spaces, registry: Registry): number[] {
  const missing = new Set<number>();
  for (const s of spaces.all.values()) {
    for (const a of s.cellapps()) if (registry.members.get(a)?.role !== "cellapp") missing.add(a);
  }
  for (const a of missing) spaces.onCellAppLeft(a);
  return [...missing];
}
