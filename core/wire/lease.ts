/**
 * A member's lease on what it holds (docs/faults.md, "The lease"): a cellapp's on its cells, a
 * baseapp's on its bases. The cellappmgr declares a member dead after `deadAfterMs` without a frame from it, and only
 * then gives what it held to others (a cellapp's cells and entities; a baseapp's bases, restored from their backups).
 * A ping sent at time t and answered on the registered channel proves the cellappmgr heard this member at t or later,
 * so it cannot declare it dead before t + deadAfterMs: the member may act until t + leaseMs, with leaseMs well short
 * of deadAfterMs (the margin covers a tick begun just before the end, delivery and clock rates). The lease also ends
 * with the channel that granted it: the cellappmgr restores a member's entities as soon as its channel closes. A
 * lease of 0 is none: the member acts whatever the cellappmgr does (availability over safety).
 */
import type { Logger } from "../log.ts";
import type { Channel } from "./channel.ts";
import { ChannelMsg } from "./messages.ts";
import type { MgrLink } from "./member.ts";

/** The lease as a share of the cellappmgr's dead timeout when none is configured. */
export const LEASE_SHARE = 0.6;
/** The longest lease allowed, as a share of the dead timeout: the rest is the margin. */
export const MAX_LEASE_SHARE = 0.75;
/** Longest time between two pings; a shorter lease pings four times per lease. */
const PING_MS = 250;
/** Pings in flight at most: a cellappmgr that does not answer is not sent more. */
const MAX_PINGS = 4;

/** What configures a lease: its length in ms, null for the default share of the dead timeout, 0 for none. */
export type LeaseSetting = number | null;

/** The lease of one member on what it holds, renewed by pings answered on the link to the cellappmgr. */
export class MgrLease {
  /** performance.now() time the lease runs to. */
  #until = -Infinity;
  /**
   * The channel whose answer granted it: the lease ends with it, since the cellappmgr takes a closed channel for a
   * member gone and restores its entities at once.
   */
  #grantedOn: Channel | null = null;
  #inFlight = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  /** When the registration awaiting its first answer was taken (see `starting`); null once answered. */
  #startedAt: number | null = null;
  /** The dead timeout the length was last worked out for, so a clamp is logged once per value. */
  #clampedFor = 0;
  /** Called when an answer grants the lease while it was not held (first granted, or renewed after a lapse). */
  onGranted: (() => void) | null = null;

  constructor(
    private readonly link: MgrLink,
    private readonly setting: LeaseSetting,
    private readonly log: Logger,
    /** What holds the lease, for the log: "cellapp" or "baseapp". */
    private readonly role: string = "cellapp",
  ) {
    if (this.enabled) this.#schedule(0);
  }

  /** Whether there is a lease at all (`--mgr-lease` not 0). */
  get enabled(): boolean {
    return this.setting !== 0;
  }

  /** The lease's length (ms) against the cellappmgr's current dead timeout. */
  get ms(): number {
    const dead = this.link.deadAfterMs;
    if (this.setting === null) return Math.round(dead * LEASE_SHARE);
    const most = Math.floor(dead * MAX_LEASE_SHARE);
    if (this.setting <= most) return this.setting;
    if (this.#clampedFor !== dead) {
      this.#clampedFor = dead;
      this.log.warn(
        `--mgr-lease=${this.setting} is too long for the cellappmgr's dead timeout of ${dead} ms: ` +
          `${most} ms is used, so that this ${this.role} stops acting before what it holds can be given away`,
      );
    }
    return most;
  }

  /** Whether the holder may act at `now` (performance.now() time): always without a lease. */
  held(now: number = performance.now()): boolean {
    return !this.enabled || (now < this.#until && this.#grantedOn !== null && this.#grantedOn.isOpen);
  }

  /**
   * Whether the lease is still awaiting its first answer after a registration, for less than its length: what that
   * registration gave waits for it without a word (it comes within a round trip).
   */
  starting(now: number = performance.now()): boolean {
    return this.#startedAt !== null && now - this.#startedAt < this.ms;
  }

  /** Why the lease is not held at `now`, for the log. */
  lapse(now: number = performance.now()): string {
    if (!Number.isFinite(this.#until)) return `the cellappmgr has not answered since this ${this.role} registered`;
    const silent = `${Math.round(now - (this.#until - this.ms))} ms`;
    if (this.#grantedOn && !this.#grantedOn.isOpen) {
      return `the link to the cellappmgr closed (last answer ${silent} ago)`;
    }
    return `the cellappmgr has not answered for ${silent}`;
  }

  /** Pings at once (after a registration): the lease is renewed as soon as the answer comes. */
  renewNow(): void {
    if (!this.enabled || this.#stopped) return;
    if (!Number.isFinite(this.#until) || !this.held()) this.#startedAt = performance.now();
    clearTimeout(this.#timer);
    this.#schedule(0);
  }

  /** Whether the lease was ever granted (else the holder only awaits its first answer). */
  get granted(): boolean {
    return Number.isFinite(this.#until);
  }

  /** Stops pinging (the holder stops). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(wait: number): void {
    this.#timer = setTimeout(() => {
      if (this.#stopped) return;
      this.#ping();
      this.#schedule(Math.min(PING_MS, Math.max(10, this.ms / 4)));
    }, wait);
  }

  #ping(): void {
    const ch: Channel | null = this.link.channel;
    if (!ch || !ch.isOpen || this.#inFlight >= MAX_PINGS) return;
    const sentAt = performance.now();
    const ms = this.ms;
    this.#inFlight++;
    ch.requestWithin(ms, ChannelMsg.ping).then(
      () => {
        // Only the channel this member is registered on speaks for the cellappmgr's view of it.
        if (this.link.channel !== ch || !ch.isOpen) return;
        const was = this.held();
        if (this.#grantedOn !== ch) this.#until = -Infinity;
        this.#grantedOn = ch;
        this.#until = Math.max(this.#until, sentAt + ms);
        this.#startedAt = null;
        if (!was && this.held()) this.onGranted?.();
      },
      // Unanswered: the lease runs out on its own; the link closes and reconnects on its own timeout.
      () => {},
    ).finally(() => this.#inFlight--);
  }
}

/**
 * Pings the cellappmgr on the link's channel after a stall of this process: resolves true when the answer came on
 * that same channel, still open (so the cellappmgr heard this process after the stall and had not dropped it), false
 * when it did not (the link closes, and the registration that follows decides); null when there is no channel.
 */
export function confirmOnLink(link: MgrLink): Promise<boolean> | null {
  const ch = link.channel;
  if (!ch) return null;
  return ch.requestWithin(link.deadAfterMs, ChannelMsg.ping).then(
    () => link.channel === ch && ch.isOpen,
    () => false,
  );
}
