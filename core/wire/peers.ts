import { errorText } from "../errors.ts";
import type { Channel, ChannelOptions } from "./channel.ts";
import { dial } from "./endpoint.ts";
import { type Logger, Throttle } from "../log.ts";
import type { Role } from "./messages.ts";
import type { MessageDef } from "./catalog.ts";
import { encodeMessage } from "./frame.ts";
import { DialBacklogs } from "./dial_backlog.ts";

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
  /** Dials settled but still in #dialing until the sends queued on them ran. */
  #settled = new Set<string>();
  /** What `send` holds for peers being dialled. */
  readonly backlogs: DialBacklogs;

  constructor(private readonly opts: ChannelOptions, private readonly log: Logger, backlogs?: DialBacklogs) {
    this.backlogs = backlogs ?? new DialBacklogs(log);
  }

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
      // the channel out directly, hence a task later. Its backlog is settled after them too: a microtask queued when
      // the dial settles runs after those the settling queued.
      pending.then((c) => {
        this.#settled.add(address);
        queueMicrotask(() => this.#settle(address, c));
        setTimeout(() => {
          this.#dialing.delete(address);
          this.#settled.delete(address);
        }, 0);
      }, (e) => {
        this.#dialing.delete(address);
        queueMicrotask(() => this.#settle(address, null));
        const held = unreachable.take(address);
        if (held !== null) this.log.warn(`cannot reach ${address}: ${errorText(e)}${Throttle.note(held)}`);
      });
      this.#dialing.set(address, pending);
    }
    return pending;
  }

  /**
   * Sends a one-way message to `address`: on its open channel, else once it is dialled, in order with what else was
   * sent to it. What waits for a dial is encoded at once (a copy of the caller's buffers, as small as on the wire) and
   * bounded (DialBacklogs): past the bound it is dropped, and the channel closed once it opens. `lost` hears why a
   * message that waited did not go.
   */
  send<A extends unknown[]>(
    address: string,
    def: MessageDef<A, unknown>,
    args: A,
    lost?: (e: unknown) => void,
  ): void {
    const open = this.peek(address);
    if (open) return open.send(def, ...args);
    if (this.opts.checkOutgoing) {
      const bad = def.check(args);
      if (bad) throw new Error(`not sending ${def.name} to ${address}: ${bad}`);
    }
    const body = encodeMessage(def.kind, args);
    const dialled = this.get(address);
    // Once the dial settled (what waited on it went, its backlog settled), a send waits only for the rest of this task.
    const counted = !this.#settled.has(address);
    if (counted && !this.backlogs.take(address, body.length)) return;
    dialled.then((c) => {
      if (counted) this.backlogs.release(address, body.length);
      try {
        c.sendEncoded(def.name, body);
      } catch (e) {
        // Larger than the channel's frame limit: said to the sender, as a send on an open channel throws.
        lost?.(e);
      }
    }, (e) => {
      if (counted) this.backlogs.release(address, body.length);
      lost?.(e);
    });
  }

  /** After the sends queued on the dial to `address` ran: a channel that opened after drops is closed. */
  #settle(address: string, ch: Channel | null): void {
    const dropped = this.backlogs.settle(address);
    if (dropped > 0 && ch) ch.close(`${dropped} messages to it were dropped while its channel was dialled`);
  }

  /** Closes every channel. */
  close(reason: string): void {
    for (const ch of this.#open.values()) ch.close(reason);
    this.#open.clear();
  }
}
