import { Channel, type ChannelOptions } from "./channel.ts";
import { formatAddress, parseAddress } from "./address.ts";
import { type Logger, silentLogger } from "../log.ts";

/** Options of a listening endpoint: the channel options plus where to listen. */
export interface ListenOptions extends ChannelOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Called with each channel whose handshake succeeded. */
  onChannel?: (ch: Channel) => void;
  /** Connections still in their handshake beyond which a new one is closed at once (default 256). */
  maxPending?: number;
  /** Open connections beyond which a new one is closed at once (default 4096). */
  maxConnections?: number;
}

export { formatAddress, parseAddress, reachableAddress, reachableUrl, sameAddress } from "./address.ts";

/** A TCP listener whose accepted connections become channels after the handshake. */
export class WireServer {
  readonly address: string;
  readonly channels: Set<Channel> = new Set();
  /** Connections closed at once because of the caps, for tests and logs. */
  refused = 0;
  #pending = 0;
  #maxPending: number;
  #maxConnections: number;
  #listener: Deno.TcpListener;
  #log: Logger;

  constructor(opts: ListenOptions) {
    this.#listener = Deno.listen({ hostname: opts.host, port: opts.port });
    const a = this.#listener.addr;
    this.address = formatAddress(a.hostname, a.port);
    this.#log = opts.log ?? silentLogger;
    this.#maxPending = opts.maxPending ?? 256;
    this.#maxConnections = opts.maxConnections ?? 4096;
    const chOpts: ChannelOptions = {
      ...opts,
      address: opts.address ?? this.address,
    };
    this.#accept(chOpts, opts.onChannel);
  }

  /** The port actually bound. */
  get port(): number {
    return this.#listener.addr.port;
  }

  async #accept(
    opts: ChannelOptions,
    onChannel?: (ch: Channel) => void,
  ): Promise<void> {
    try {
      for await (const conn of this.#listener) {
        if (this.#pending >= this.#maxPending || this.channels.size >= this.#maxConnections) {
          // A flood of half-open connections must not starve the members' own.
          if (this.refused++ % 1000 === 0) {
            this.#log.warn(
              `refusing connections: ${this.#pending} in their handshake, ${this.channels.size} open ` +
                `(${this.refused} refused so far)`,
            );
          }
          conn.close();
          continue;
        }
        const ch = Channel.accept(conn, opts);
        this.channels.add(ch);
        this.#pending++;
        let counted = true;
        const settled = () => {
          if (counted) this.#pending--;
          counted = false;
        };
        ch.closed.then(() => {
          settled();
          this.channels.delete(ch);
        });
        ch.ready.then(() => {
          settled();
          onChannel?.(ch);
        }, () => {});
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.BadResource)) {
        this.#log.error(`accept failed: ${(e as Error).message}`);
      }
    }
  }

  /** Stops listening and closes every channel with `reason`. */
  close(reason = "server stopping"): void {
    try {
      this.#listener.close();
    } catch {
      // Already closed.
    }
    for (const ch of this.channels) ch.close(reason);
  }
}

/** Connects to `address` and completes the handshake; rejects with the reason it failed. */
export async function dial(
  address: string,
  opts: ChannelOptions,
): Promise<Channel> {
  const { hostname, port } = parseAddress(address);
  const conn = await Deno.connect({ hostname, port });
  const ch = Channel.connect(conn, { dialed: address, ...opts });
  await ch.ready;
  return ch;
}
