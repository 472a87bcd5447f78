import { errorText } from "../errors.ts";
import type { Channel, ChannelOptions } from "./channel.ts";
import { dial } from "./endpoint.ts";
import { type Logger, Throttle } from "../log.ts";
import type { Role } from "./messages.ts";

/** Bytes a process exchanged with the peers of one role. */
export interface PeerTraffic {
  bytesIn: number;
  bytesOut: number;
}

/** Failures to reach a peer, logged at most once per address per interval. */
const unreachable = new Throttle(10_000);

/**
 * Channels to other processes by their listening address, one per peer:
 * a channel the peer opened to us counts as well as one we opened, since
 * channels carry messages both ways. A missing channel is dialled on demand.
 */
export class Peers {
  #open = new Map<string, Channel>();
  /** What closed channels carried, by the peer's role. */
  #closed = new Map<Role, PeerTraffic>();
  #dialing = new Map<string, Promise<Channel>>();

  constructor(private readonly opts: ChannelOptions, private readonly log: Logger) {}

  /** Registers a channel (an accepted one, once its handshake named the peer's address). */
  adopt(ch: Channel): void {
    const address = ch.peer.address;
    if (!address || this.#open.get(address)?.isOpen) return;
    this.#open.set(address, ch);
    ch.closed.then(() => {
      const t = this.#closed.get(ch.peer.role) ?? { bytesIn: 0, bytesOut: 0 };
      t.bytesIn += ch.stats.bytesIn;
      t.bytesOut += ch.stats.bytesOut;
      this.#closed.set(ch.peer.role, t);
      if (this.#open.get(address) === ch) this.#open.delete(address);
    });
  }

  /** Bytes sent to peers so far, over open and closed channels. */
  get bytesOut(): number {
    let n = 0;
    for (const t of this.traffic().values()) n += t.bytesOut;
    return n;
  }

  /** Bytes exchanged so far with the peers of each role, over open and closed channels. */
  traffic(): Map<Role, PeerTraffic> {
    const out = new Map<Role, PeerTraffic>();
    for (const [role, t] of this.#closed) out.set(role, { ...t });
    for (const ch of this.#open.values()) {
      const t = out.get(ch.peer.role) ?? { bytesIn: 0, bytesOut: 0 };
      t.bytesIn += ch.stats.bytesIn;
      t.bytesOut += ch.stats.bytesOut;
      out.set(ch.peer.role, t);
    }
    return out;
  }

  /**
   * The open channel to `address`, if there is one now and nothing sent through get() still waits for it: while
   * a dial is pending, a channel the peer opened meanwhile must not carry later messages ahead of earlier ones.
   */
  peek(address: string): Channel | undefined {
    if (this.#dialing.has(address)) return undefined;
    const ch = this.#open.get(address);
    return ch?.isOpen ? ch : undefined;
  }

  /** The channel to `address`, dialling it when there is none. */
  get(address: string): Promise<Channel> {
    const ch = this.peek(address);
    if (ch) return Promise.resolve(ch);
    let pending = this.#dialing.get(address);
    if (!pending) {
      pending = dial(address, { ...this.opts, expectRoles: ["cellapp", "baseapp"] }).then((c) => {
        this.adopt(c);
        return this.#open.get(address) ?? c;
      });
      // Every send queued on the dial runs (in order) in the microtasks after it settles; only then may peek() hand
      // the channel out directly, hence a task later.
      pending.then(() => setTimeout(() => this.#dialing.delete(address), 0), (e) => {
        this.#dialing.delete(address);
        const held = unreachable.take(address);
        if (held !== null) this.log.warn(`cannot reach ${address}: ${errorText(e)}${Throttle.note(held)}`);
      });
      this.#dialing.set(address, pending);
    }
    return pending;
  }

  /** Closes every channel. */
  close(reason: string): void {
    for (const ch of this.#open.values()) ch.close(reason);
    this.#open.clear();
  }
}
