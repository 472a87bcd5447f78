import { type Logger, Throttle } from "../log.ts";

/**
 * Bytes of one-way messages that may wait for one peer's channel while it is being dialled (docs/protocol.md,
 * "Peers"). A dial is settled within a round trip or two, or at the handshake timeout: a peer that accepts the
 * connection and never finishes the handshake (a stalled or hostile process, or a connection that reached itself)
 * must not make this process hold all it sends meanwhile.
 */
export const PEER_BACKLOG_BYTES = 4 * 1024 * 1024;

/** Bytes of messages that may wait for all peers' dials together: many such peers cost no more than four. */
export const ALL_BACKLOG_BYTES = 4 * PEER_BACKLOG_BYTES;

/** What waits for one peer's dial. */
interface Backlog {
  bytes: number;
  /** Messages refused since the backlog started, and their bytes. */
  dropped: number;
  droppedBytes: number;
  /** performance.now() when its first message was taken. */
  since: number;
}

/**
 * The messages waiting for peers' channels to be dialled, counted by peer address and bounded per peer and in all. A
 * message past a bound is dropped, and said once per dial naming the peer; once the dial settles (`settle`), the
 * caller closes a channel that opened after drops, so that the peer learns it missed messages (as from a channel
 * closed for reading too slowly).
 */
export class DialBacklogs {
  readonly #byPeer = new Map<string, Backlog>();
  #total = 0;
  /** Lines about dropped messages: at most one per peer per interval. */
  readonly #dropLines = new Throttle(10_000);

  constructor(
    private readonly log: Logger,
    readonly peerLimit: number = PEER_BACKLOG_BYTES,
    readonly allLimit: number = ALL_BACKLOG_BYTES,
  ) {}

  /** Bytes waiting for all peers. */
  get bytes(): number {
    return this.#total;
  }

  /** Takes room for a message of `n` bytes to `address`; false when there is none (the message is dropped). */
  take(address: string, n: number): boolean {
    let b = this.#byPeer.get(address);
    if (!b) this.#byPeer.set(address, b = { bytes: 0, dropped: 0, droppedBytes: 0, since: performance.now() });
    if (b.bytes + n <= this.peerLimit && this.#total + n <= this.allLimit) {
      b.bytes += n;
      this.#total += n;
      return true;
    }
    if (b.dropped === 0) {
      const held = this.#dropLines.take(address);
      if (held !== null) {
        this.log.warn(
          `dropping messages to ${address}: ${b.bytes} bytes for it (${this.#total} for all peers) wait for its ` +
            `channel, dialled ${Math.round(performance.now() - b.since)} ms ago and not through its handshake; at ` +
            `most ${this.peerLimit} may wait per peer and ${this.allLimit} in all${Throttle.note(held)}`,
        );
      }
    }
    b.dropped++;
    b.droppedBytes += n;
    return false;
  }

  /** Gives back the room of a message of `n` bytes to `address`: it was sent, or lost with its dial. */
  release(address: string, n: number): void {
    const b = this.#byPeer.get(address);
    if (!b) return;
    b.bytes -= n;
    this.#total -= n;
  }

  /** The dial to `address` settled and what waited for it went: forgets its backlog; how many messages were dropped. */
  settle(address: string): number {
    const b = this.#byPeer.get(address);
    if (!b) return 0;
    this.#byPeer.delete(address);
    this.#total -= b.bytes;
    if (b.dropped > 0) {
      this.log.warn(
        `${b.dropped} messages (${b.droppedBytes} bytes) to ${address} were dropped while its channel was dialled ` +
          `(${Math.round(performance.now() - b.since)} ms)`,
      );
    }
    return b.dropped;
  }
}
